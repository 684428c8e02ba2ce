package io.lockstep.recipes.locks;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.CuratorZookeeperClient;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.listen.Listenable;
import org.apache.curator.framework.listen.StandardListenerManager;
import org.apache.curator.framework.state.ConnectionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One per Curator client: hears the client's connection states and its closing, and passes them to
 * every live acquisition of that client. One listener per client, however many locks wait.
 *
 * <p>Curator's {@code close()} posts no connection state; it tells its {@code CuratorListener}s
 * with a {@code CLOSING} event, in the closing thread, before the session ends. A namespace facade
 * ({@code client.usingNamespace(...)}) offers no such listener, so for a client first seen through
 * one the state is polled while acquisitions are live.
 */
final class ClientEvents {
  private static final Logger log = LoggerFactory.getLogger(ClientEvents.class);

  /** An acquisition, as the client's events reach it. */
  interface Member {
    /** SUSPENDED or READ_ONLY. */
    void suspended();

    /** CONNECTED or RECONNECTED, in session {@code session}. */
    void reconnected(long session);

    /** LOST. */
    void sessionLost();

    /** The client is closing: terminal. */
    void closed();
  }

  /** How often a client without a close listener is checked while locks are live. */
  private static final long CLOSE_POLL_MILLIS = 100;

  private static final ConcurrentMap<CuratorZookeeperClient, ClientEvents> registry =
      new ConcurrentHashMap<>();

  private final CuratorZookeeperClient key;
  private final CuratorFramework client;
  private final Scheduler scheduler;
  private final Set<Member> members = ConcurrentHashMap.newKeySet();
  private final LocalQueues localQueues = new LocalQueues();
  private final ConcurrentMap<String, Cohort> cohorts = new ConcurrentHashMap<>();
  private final StandardListenerManager<LockObserver> observers =
      StandardListenerManager.standard();
  private final ReentrantLock lock = new ReentrantLock();
  private final AtomicBoolean listeningForClose = new AtomicBoolean();
  private final AtomicBoolean polling = new AtomicBoolean();

  @GuardedBy("lock")
  private boolean closed;

  private ClientEvents(CuratorZookeeperClient key, CuratorFramework client, Scheduler scheduler) {
    this.key = key;
    this.client = client;
    this.scheduler = scheduler;
  }

  /** The events of {@code client} (and of every namespace facade of it). */
  static ClientEvents of(CuratorFramework client, Scheduler scheduler) {
    CuratorZookeeperClient key = client.getZookeeperClient();
    ClientEvents events =
        registry.computeIfAbsent(
            key,
            k -> {
              ClientEvents created = new ClientEvents(k, client, scheduler);
              client.getConnectionStateListenable().addListener((c, s) -> created.changed(s));
              return created;
            });
    events.listenForClose(client);
    return events;
  }

  /** The observers of every lock of {@code client}. */
  static Listenable<LockObserver> observersOf(CuratorFramework client) {
    return of(client, Background.INSTANCE).observers;
  }

  StandardListenerManager<LockObserver> observers() {
    return observers;
  }

  boolean hasObservers() {
    return observers.size() > 0;
  }

  /** Registers a close listener, unless one is registered or the client cannot take one. */
  private void listenForClose(CuratorFramework viaClient) {
    if (listeningForClose.get()) {
      return;
    }
    try {
      viaClient
          .getCuratorListenable()
          .addListener(
              (c, event) -> {
                if (event.getType() == CuratorEventType.CLOSING) {
                  close();
                }
              });
      listeningForClose.set(true);
    } catch (UnsupportedOperationException namespaceFacade) {
      // polled instead, while members are live (see join)
    }
  }

  /**
   * Adds a live acquisition.
   *
   * @return false if the client is closed already (the member is not added)
   */
  boolean join(Member member) {
    lock.lock();
    try {
      if (closed || client.getState() == CuratorFrameworkState.STOPPED) {
        return false;
      }
      members.add(member);
    } finally {
      lock.unlock();
    }
    if (!listeningForClose.get() && polling.compareAndSet(false, true)) {
      scheduler.schedule(CLOSE_POLL_MILLIS, this::poll);
    }
    return true;
  }

  /** Removes an acquisition that has ended. */
  void leave(Member member) {
    members.remove(member);
  }

  /**
   * The cohort of this client on the queue of {@code lockZkPath} for {@code slot}'s lock name: one
   * place in the queue shared by every lock object of the client that hands off locally there.
   */
  Cohort cohortOf(String lockZkPath, Slot slot, CuratorFramework lockClient) {
    return cohorts.computeIfAbsent(
        lockZkPath + "|" + slot.driver().lockName(),
        key -> new Cohort(lockClient, slot.path(), slot));
  }

  /** This client's nodes in each single queue. */
  LocalQueues localQueues() {
    return localQueues;
  }

  /** How many acquisitions of this client are live. */
  int liveCount() {
    return members.size();
  }

  private void poll() {
    if (client.getState() == CuratorFrameworkState.STOPPED) {
      close();
      return;
    }
    polling.set(false);
    if (!members.isEmpty() && polling.compareAndSet(false, true)) {
      scheduler.schedule(CLOSE_POLL_MILLIS, this::poll);
    }
  }

  private void changed(ConnectionState state) {
    log.debug("{}: {} for {} live acquisitions", client, state, members.size());
    switch (state) {
      case SUSPENDED:
      case READ_ONLY:
        List.copyOf(members).forEach(Member::suspended);
        break;
      case CONNECTED:
      case RECONNECTED:
        long session = sessionId();
        List.copyOf(members).forEach(member -> member.reconnected(session));
        break;
      case LOST:
        List.copyOf(members).forEach(Member::sessionLost);
        break;
    }
  }

  private void close() {
    List<Member> toTell;
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      toTell = List.copyOf(members);
      members.clear();
    } finally {
      lock.unlock();
    }
    registry.remove(key, this);
    toTell.forEach(Member::closed);
  }

  private long sessionId() {
    try {
      return client.getZookeeperClient().getZooKeeper().getSessionId();
    } catch (Exception e) {
      return 0;
    }
  }
}

package io.lockstep.recipes.internal.engine;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.lockstep.recipes.internal.zk.Scheduler;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connection states and the closing of one Curator client, passed to every live acquisition of
 * that client: one listener per client, however many locks wait. Part of the client's {@link
 * LockEngine}.
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
    /**
     * One of the client's events: {@link StateEvent.Suspended} (SUSPENDED or READ_ONLY), {@link
     * StateEvent.Reconnected} (CONNECTED or RECONNECTED), {@link StateEvent.SessionLost} (LOST) or
     * {@link StateEvent.Closed} (the client is closing: terminal).
     */
    void heard(StateEvent event);
  }

  /** How often a client without a close listener is checked while locks are live. */
  private static final long CLOSE_POLL_MILLIS = 100;

  private final CuratorFramework client;
  private final Scheduler scheduler;
  private final Runnable onClose;
  private final Set<Member> members = ConcurrentHashMap.newKeySet();
  private final ReentrantLock lock = new ReentrantLock();
  private final AtomicBoolean listeningForClose = new AtomicBoolean();
  private final AtomicBoolean polling = new AtomicBoolean();

  @GuardedBy("lock")
  private boolean closed;

  /** Completes when the client loses its connection (or closes); renewed at each reconnect. */
  private final AtomicReference<CompletableFuture<Void>> disconnected =
      new AtomicReference<>(new CompletableFuture<>());

  /**
   * How many times the client lost its connection (SUSPENDED, READ_ONLY, LOST) or closed: an
   * attempt compares it with its value at the start to know whether ZooKeeper was out of reach
   * meanwhile.
   */
  private final AtomicLong disconnects = new AtomicLong();

  /**
   * Complete while the client is connected; after a disconnect, a new one that completes at the
   * next (re)connection (or when the client closes). What a retry waiting out its delay also waits
   * for: once ZooKeeper is back, it need not wait any longer.
   */
  private final AtomicReference<CompletableFuture<Void>> connectedAgain =
      new AtomicReference<>(new CompletableFuture<>());

  /** Whether the client has been connected at least once (its first connection is not pending). */
  private volatile boolean connectedOnce;

  /** The last state Curator reported was READ_ONLY: connected, but no lock can be taken. */
  private volatile boolean readOnly;

  /**
   * @param onClose run once, after the members were told, when the client closes
   */
  ClientEvents(CuratorFramework client, Scheduler scheduler, Runnable onClose) {
    this.client = client;
    this.scheduler = scheduler;
    this.onClose = onClose;
    client.getConnectionStateListenable().addListener((c, s) -> changed(s));
    connectedOnce = client.getZookeeperClient().isConnected(); // else CONNECTED is still to come
    if (connectedOnce) {
      connectedAgain.get().complete(null);
    }
  }

  /** Registers a close listener, unless one is registered or the client cannot take one. */
  void listenForClose(CuratorFramework viaClient) {
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

  /** How many acquisitions of this client are live. */
  int liveCount() {
    return members.size();
  }

  /**
   * Completes as soon as ZooKeeper cannot be reached: at once if the client is not connected now
   * (not yet connected, suspended, read-only, lost or closed), else at the next disconnect. What a
   * caller with a budget stops waiting for.
   */
  CompletableFuture<Void> unreachable() {
    if (!connected()) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> next = disconnected.get();
    if (next.isDone()) { // connected again, and Curator has not told us yet
      disconnected.compareAndSet(next, new CompletableFuture<>());
      next = disconnected.get();
    }
    return next;
  }

  /**
   * Whether the client is started and waits for its first connection: ZooKeeper has not been
   * reachable yet, but nothing says it is not (a timed call waits its grace for that connection).
   */
  boolean awaitingFirstConnection() {
    return !connectedOnce && client.getState() == CuratorFrameworkState.STARTED && !isClosed();
  }

  private boolean isClosed() {
    lock.lock();
    try {
      return closed;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Completes when the client is connected: done now if it is (as far as Curator has told), else at
   * the next connection or reconnection, or when the client closes.
   */
  CompletableFuture<Void> connection() {
    return connectedAgain.get();
  }

  /** How many times the client lost its connection or closed, so far. */
  long disconnects() {
    return disconnects.get();
  }

  /** Whether the client is connected to a server that takes writes, now. */
  boolean connected() {
    return client.getState() == CuratorFrameworkState.STARTED
        && client.getZookeeperClient().isConnected()
        && !readOnly;
  }

  /**
   * Closes these events if the client was closed while nothing listened for it: a client seen only
   * through namespace facades, closed while no acquisition was live to poll for it.
   */
  void closeIfClosedUnheard() {
    if (!listeningForClose.get() && client.getState() == CuratorFrameworkState.STOPPED) {
      close();
    }
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
        readOnly = state == ConnectionState.READ_ONLY;
        disconnects.incrementAndGet();
        awaitReconnect();
        disconnected.get().complete(null);
        List.copyOf(members).forEach(member -> member.heard(new StateEvent.Suspended()));
        break;
      case CONNECTED:
      case RECONNECTED:
        readOnly = false;
        connectedOnce = true;
        connectedAgain.get().complete(null);
        CompletableFuture<Void> last = disconnected.get();
        if (last.isDone()) {
          disconnected.compareAndSet(last, new CompletableFuture<>());
        }
        long session = sessionId();
        List.copyOf(members).forEach(member -> member.heard(new StateEvent.Reconnected(session)));
        break;
      case LOST:
        disconnects.incrementAndGet();
        awaitReconnect();
        disconnected.get().complete(null);
        List.copyOf(members).forEach(member -> member.heard(new StateEvent.SessionLost()));
        break;
    }
  }

  /** A disconnect: from now on, {@link #connection()} completes at the next (re)connection. */
  private void awaitReconnect() {
    CompletableFuture<Void> last = connectedAgain.get();
    if (last.isDone()) {
      connectedAgain.compareAndSet(last, new CompletableFuture<>());
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
    disconnects.incrementAndGet();
    disconnected.get().complete(null);
    connectedAgain.get().complete(null); // nothing to wait for: retries see the client closed
    onClose.run();
    toTell.forEach(member -> member.heard(new StateEvent.Closed()));
  }

  private long sessionId() {
    try {
      return client.getZookeeperClient().getZooKeeper().getSessionId();
    } catch (Exception e) {
      return 0;
    }
  }
}

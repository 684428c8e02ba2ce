package io.lockstep.testing;

import io.lockstep.testkit.internal.Links;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The faults of the demo's fault phase and of the chaos test, on one ensemble and the {@link Links}
 * of its clients: kill and restart a server, expire a session on the server, cut a client off
 * (loudly or silently), slow its links, lose the answer to its next request.
 *
 * <p>Faults that last are undone on a schedule of their own, or all at once by {@link
 * #healEverything()}. At most one server is down at a time, so a three-server ensemble keeps its
 * quorum, and at most {@code maxLinksDown} clients are cut off at a time, so most keep working.
 * Which fault to inject and when is the caller's business.
 */
public final class FaultInjector implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(FaultInjector.class);

  private final Ensemble ensemble;
  private final int maxLinksDown;
  private final ScheduledExecutorService undo;
  private final AtomicReference<InstanceSpec> downServer = new AtomicReference<>();
  private final ReentrantLock linksDownLock = new ReentrantLock(); // makes check-then-add atomic
  private final Set<Links> linksDown = ConcurrentHashMap.newKeySet();
  private final Set<Links> touched = ConcurrentHashMap.newKeySet();
  private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();

  /**
   * An injector for {@code ensemble}.
   *
   * @param maxLinksDown how many clients may be cut off at once
   */
  public FaultInjector(Ensemble ensemble, int maxLinksDown) {
    this.ensemble = ensemble;
    this.maxLinksDown = maxLinksDown;
    this.undo =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              Thread thread = new Thread(task, "fault-undo");
              thread.setDaemon(true);
              return thread;
            });
  }

  /**
   * Kills {@code server}, unless a server is down already.
   *
   * @return whether it was killed
   */
  public boolean killServer(InstanceSpec server) throws Exception {
    if (!downServer.compareAndSet(null, server)) {
      return false;
    }
    log.info("fault: killing server {}", server.getPort());
    try {
      ensemble.kill(server);
    } catch (Exception e) {
      downServer.set(null);
      throw e;
    }
    return true;
  }

  /** Kills the leader, unless a server is down already or no leader answers; the leader killed. */
  public Optional<InstanceSpec> killLeader() throws Exception {
    Optional<InstanceSpec> leader = ensemble.leader();
    return leader.isPresent() && killServer(leader.get()) ? leader : Optional.empty();
  }

  /** The server killed and not restarted yet. */
  public Optional<InstanceSpec> downServer() {
    return Optional.ofNullable(downServer.get());
  }

  /** Restarts the server that is down, if one is; the server restarted. */
  public Optional<InstanceSpec> restartDownServer() throws Exception {
    InstanceSpec server = downServer.get();
    if (server == null) {
      return Optional.empty();
    }
    try {
      ensemble.restart(server);
      log.info("fault: restarted server {}", server.getPort());
    } finally {
      downServer.set(null);
    }
    return Optional.of(server);
  }

  /** Restarts the server that is down {@code delay} from now. */
  public void restartDownServerAfter(Duration delay) {
    later(
        delay,
        () -> {
          try {
            var unused = restartDownServer();
          } catch (Exception e) {
            failures.add("could not restart a server: " + e);
          }
        });
  }

  /**
   * Expires the client's session on the server, as a long pause would ({@link Sessions#expire}).
   *
   * @return the id of the session ended
   */
  public long expireSession(CuratorFramework client) throws Exception {
    long session = Sessions.expire(client, ensemble.connectString());
    log.info("fault: expired session 0x{}", Long.toHexString(session));
    return session;
  }

  /**
   * Cuts a client off from every server for {@code length}: loudly (connections reset, as a crashed
   * switch would) or silently (bytes dropped, noticed only through timeouts).
   *
   * @return false, and nothing done, if the links are cut already or too many are
   */
  public boolean cutOff(Links links, boolean loud, Duration length) {
    linksDownLock.lock();
    try {
      if (linksDown.size() >= maxLinksDown || !linksDown.add(links)) {
        return false;
      }
    } finally {
      linksDownLock.unlock();
    }
    touched.add(links);
    log.info("fault: cutting {} off ({})", links, loud ? "resets" : "silent");
    if (loud) {
      links.cut();
    } else {
      links.blackhole();
    }
    later(
        length,
        () -> {
          links.heal();
          linksDown.remove(links);
          log.info("fault: healed {}", links);
        });
    return true;
  }

  /** Delays a client's links by {@code latencyMillis} each way for {@code length}. */
  public void slowDown(Links links, long latencyMillis, Duration length) {
    touched.add(links);
    links.setLatency(latencyMillis);
    later(length, () -> links.setLatency(0));
  }

  /**
   * Loses the answer to the next request the client sends ({@link Links#loseNextResponse}).
   *
   * @return whether the client had a connection to arm the fault on
   */
  public boolean loseNextResponse(Links links, long closeAfterMillis) {
    touched.add(links);
    boolean armed = links.loseNextResponse(closeAfterMillis);
    if (armed) {
      log.info("fault: losing the answer to the next request on {}", links);
    }
    return armed;
  }

  /** What went wrong undoing faults on the schedule (a server that would not restart). */
  public List<String> failures() {
    return new ArrayList<>(failures);
  }

  /**
   * Cancels the scheduled undoing and undoes every fault still in force now: restarts the server
   * that is down, heals every link and takes its latency away. No fault may be injected after.
   */
  public void healEverything() throws Exception {
    undo.shutdownNow();
    if (!undo.awaitTermination(30, TimeUnit.SECONDS)) {
      failures.add("a scheduled undo did not finish within 30 s");
    }
    var unused = restartDownServer();
    touched.forEach(Links::restore);
    linksDown.clear();
  }

  @Override
  public void close() throws Exception {
    healEverything();
  }

  private void later(Duration delay, Runnable action) {
    var unused = undo.schedule(action, delay.toNanos(), TimeUnit.NANOSECONDS);
  }
}

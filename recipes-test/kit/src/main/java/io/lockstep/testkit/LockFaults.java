package io.lockstep.testkit;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.testkit.internal.Links;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Faults to inject into a {@link LockstepZooKeeper} and the clients it serves, each a real event on
 * a real server: what a test of code that holds Lockstep locks needs to make them go {@code
 * AT_RISK} and {@code LOST}. What each does to every recipe is in docs/testing.md.
 *
 * <ul>
 *   <li>{@link #expireSession(CuratorFramework)}, {@link #expireSessionOf(LockHold)}: the server
 *       ends the session, as it does when a client was silent past its session timeout (a long GC
 *       pause, a frozen process): its nodes go at once, holds go {@code LOST}.
 *   <li>{@link #disconnect(CuratorFramework, Duration)}: the client's connection is reset and new
 *       ones are refused for a while: {@code AT_RISK}, then {@code HELD} again if it reconnects
 *       within its session timeout, or {@code LOST} after it.
 *   <li>{@link #silence(CuratorFramework, Duration)}, {@link #silenceServers(Duration)}: bytes are
 *       dropped without a reset, as from a hung server or a partition: the client only notices by
 *       its own timeouts.
 *   <li>{@link #deleteNode(LockHold)}: another party deletes the holder's node.
 *   <li>{@link #restartServers()}: every server restarts (an ensemble's one at a time); sessions
 *       live on.
 * </ul>
 *
 * <p>A fault with a duration returns at once with a {@link Fault} that heals by itself; every fault
 * still in force is healed after the test. Thread-safe.
 */
public final class LockFaults {
  private final LockstepZooKeeper zk;
  private final List<Fault> inForce = new CopyOnWriteArrayList<>();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          task -> {
            Thread thread = new Thread(task, "lockstep-test-faults");
            thread.setDaemon(true);
            return thread;
          });

  LockFaults(LockstepZooKeeper zk) {
    this.zk = zk;
  }

  /**
   * Ends {@code client}'s current session on the server, as a session timeout would: its ephemeral
   * nodes are deleted at once and the client hears that its session expired the next time it talks
   * to the server (Curator's {@code LOST}; it then makes a new session).
   *
   * @param client a started, connected client of this ZooKeeper
   * @return the id of the session that was ended
   * @throws NullPointerException if {@code client} is null
   * @throws IllegalStateException if the session could not be reached within 10 seconds
   */
  public long expireSession(CuratorFramework client) {
    Objects.requireNonNull(client, "client");
    try {
      return Sessions.expire(client, zk.serverConnectString());
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("could not expire the session: " + e, e);
    }
  }

  /**
   * Ends the session that owns {@code hold}'s node, whichever client it is (one made by the
   * extension, or an application's): see {@link #expireSession(CuratorFramework)}.
   *
   * @param hold a hold of any Lockstep recipe (a lock's, a lease, a leadership)
   * @return the id of the session that was ended
   * @throws NullPointerException if {@code hold} is null
   * @throws IllegalStateException if the hold's node is gone already, or its session could not be
   *     reached
   */
  public long expireSessionOf(LockHold hold) {
    return expireOwnerOf(nodeOf(Objects.requireNonNull(hold, "hold").ownershipChecks()));
  }

  /**
   * Ends the session that owns the node of {@code lock}'s current hold (the calling thread's, for a
   * reentrant lock): see {@link #expireSessionOf(LockHold)}.
   *
   * @param lock a lock that the caller holds
   * @return the id of the session that was ended
   * @throws NullPointerException if {@code lock} is null
   * @throws IllegalMonitorStateException if the caller does not hold {@code lock}
   * @throws IllegalStateException if the node is gone already, or its session could not be reached
   */
  public long expireSessionOf(FencedLock lock) {
    return expireOwnerOf(nodeOf(Objects.requireNonNull(lock, "lock").ownershipChecks()));
  }

  /**
   * Resets {@code client}'s connection and refuses new ones for {@code length}: the client is
   * {@code SUSPENDED} (holds {@code AT_RISK}), then reconnects in its session if {@code length} is
   * shorter than the session timeout, or finds it expired if longer ({@code LOST}). A client on the
   * shared link ({@link LockstepZooKeeper#connectString()}) takes every client of that link with
   * it.
   *
   * @param client a client of this ZooKeeper, made by the extension or on its shared link
   * @param length how long the link stays cut
   * @return the fault, which heals by itself after {@code length}
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code length} is negative, or the client does not talk
   *     through one of the extension's links
   */
  public Fault disconnect(CuratorFramework client, Duration length) {
    Links link = zk.linkOf(Objects.requireNonNull(client, "client"));
    return inForce(List.of(link), length, Links::cut);
  }

  /**
   * Drops every byte between {@code client} and the servers for {@code length}, without resetting
   * anything: as a hung server or a partition. The client notices only when its own timeouts run
   * out (about two thirds of its session timeout without an answer); afterwards as {@link
   * #disconnect}.
   *
   * @param client a client of this ZooKeeper, made by the extension or on its shared link
   * @param length how long the silence lasts
   * @return the fault, which heals by itself after {@code length}
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code length} is negative, or the client does not talk
   *     through one of the extension's links
   */
  public Fault silence(CuratorFramework client, Duration length) {
    Links link = zk.linkOf(Objects.requireNonNull(client, "client"));
    return inForce(List.of(link), length, Links::blackhole);
  }

  /**
   * Silences the servers towards every client on the extension's links for {@code length}, as a
   * hung ensemble: see {@link #silence}.
   *
   * @param length how long the silence lasts
   * @return the fault, which heals by itself after {@code length}
   * @throws NullPointerException if {@code length} is null
   * @throws IllegalArgumentException if {@code length} is negative
   */
  public Fault silenceServers(Duration length) {
    return inForce(zk.allLinks(), length, Links::blackhole);
  }

  /**
   * Deletes {@code hold}'s node, as an operator or another program might. A single-path lock's
   * holder and a lease notice it and go {@code LOST}; a leadership is lost and the election goes
   * on.
   *
   * @param hold a hold of any Lockstep recipe
   * @throws NullPointerException if {@code hold} is null
   * @throws IllegalStateException if the node is gone already
   */
  public void deleteNode(LockHold hold) {
    String node = nodeOf(Objects.requireNonNull(hold, "hold").ownershipChecks());
    try {
      zk.admin().delete().forPath(node);
    } catch (KeeperException.NoNodeException gone) {
      throw new IllegalStateException("the hold's node is gone already: " + node, gone);
    } catch (Exception e) {
      throw new IllegalStateException("could not delete " + node + ": " + e, e);
    }
  }

  /**
   * Restarts the server (an ensemble's servers one at a time) and returns once it is back. Sessions
   * live on if the clients reconnect within their session timeouts: holds go {@code AT_RISK} and
   * back to {@code HELD}.
   *
   * @throws IllegalStateException if a server could not be restarted
   */
  public void restartServers() {
    try {
      zk.restartServers();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("could not restart the servers: " + e, e);
    }
  }

  /** Heals every fault still in force. */
  void healAll() {
    inForce.forEach(Fault::heal);
    inForce.clear();
  }

  private Fault inForce(
      List<Links> links, Duration length, java.util.function.Consumer<Links> how) {
    Objects.requireNonNull(length, "length");
    if (length.isNegative()) {
      throw new IllegalArgumentException("length must not be negative: " + length);
    }
    Fault fault = new Fault(() -> links.forEach(Links::heal));
    links.forEach(how);
    fault.healAfter(timer.schedule(fault::heal, length.toNanos(), TimeUnit.NANOSECONDS));
    inForce.add(fault);
    return fault;
  }

  private static String nodeOf(List<CuratorOp> checks) {
    return checks.get(0).get().getPath();
  }

  private long expireOwnerOf(String node) {
    Stat stat;
    try {
      stat = zk.admin().checkExists().forPath(node);
    } catch (Exception e) {
      throw new IllegalStateException("could not read " + node + ": " + e, e);
    }
    if (stat == null || stat.getEphemeralOwner() == 0) {
      throw new IllegalStateException("no session owns " + node + " (gone already?)");
    }
    try {
      Sessions.expire(stat.getEphemeralOwner(), zk.serverConnectString());
      return stat.getEphemeralOwner();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("could not expire the session owning " + node + ": " + e, e);
    }
  }
}

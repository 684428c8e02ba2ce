package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.locks.LockState;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.zookeeper.KeeperException.Code;

/**
 * A granted hold, as its {@link AcquisitionState} sees it: HELD, AT_RISK, LOST or RELEASED, whether
 * its own node is watched, and why it was lost. Made at the grant; from then on every event of the
 * acquisition comes here. Not thread-safe: used only under the owning state's lock.
 *
 * <p>Noticing a deleted node: a hold of a single queue that nothing watches (granted by a read that
 * left no child watch, or whose child watch fired) watches its own node once it has lasted its
 * grace. A shorter hold never does, and so costs no request and no watch event at its release; a
 * node deleted within the grace is found missing by the read that arms the watch.
 *
 * <pre>
 *   HELD --Suspended--&gt; AT_RISK --Verified, connected--&gt; HELD
 *   HELD, AT_RISK --own node gone, session lost or new, client closed, expired--&gt; LOST
 *   HELD, AT_RISK, LOST --Release--&gt; RELEASED
 * </pre>
 */
final class GrantedState {
  private final int epoch;
  private final long token;
  private final List<String> nodes;
  private final long owner;
  private final boolean singleQueue;
  private final LongSupplier clock;
  private final long watchDueNanos; // the end of the grace: from then on our node is watched
  private final boolean queueWatched; // the granting read left a child watch
  private final Tenure tenure;
  private boolean ownNodeWatched; // a data watch on our (first) node is armed
  private boolean watchScheduled; // an OwnNodeWatchDue is on its way

  /**
   * @param connected the connection's state as the grant came: a grant while disconnected is at
   *     risk from the start
   * @param ownNodeWatched whether the read that led to the grant left a watch on our node
   * @param queueWatched whether the read that led to the grant left a child watch on the queue
   * @param clock the injected clock, in nanoseconds
   * @param graceNanos how long the hold goes without watching its own node
   */
  GrantedState(
      int epoch,
      long token,
      List<String> nodes,
      long owner,
      boolean connected,
      boolean ownNodeWatched,
      boolean queueWatched,
      LongSupplier clock,
      long graceNanos) {
    this.epoch = epoch;
    this.token = token;
    this.nodes = List.copyOf(nodes);
    this.owner = owner;
    this.singleQueue = nodes.size() == 1;
    this.tenure = new Tenure(connected);
    this.ownNodeWatched = ownNodeWatched;
    this.queueWatched = queueWatched;
    this.clock = clock;
    this.watchDueNanos = clock.getAsLong() + graceNanos;
  }

  /**
   * The step that announces this hold; with it, if nothing watches the hold, the watch of our own
   * node at the end of the grace.
   */
  Step grant(boolean revokeRequested) {
    Step.Grant grant = new Step.Grant(token, tenure.phase() == Phase.AT_RISK, revokeRequested);
    if (queueWatched) {
      return grant; // the child watch tells of the next change first
    }
    Step watch = watchOwnNodeInTime();
    return watch == Step.IGNORE ? grant : new Step.Both(grant, watch);
  }

  Phase phase() {
    return tenure.phase();
  }

  String lostReason() {
    return tenure.lostReason();
  }

  /** One event in (its epoch already checked), the next step out. */
  Step on(StateEvent event) {
    if (event instanceof StateEvent.Release) {
      return release();
    }
    if (!tenure.isHolding()) {
      return Step.IGNORE; // LOST or RELEASED: only a release moves it
    }
    if (event instanceof StateEvent.Suspended) {
      return tenure.suspend()
          ? new Step.Notify(LockState.AT_RISK, token, "connection suspended")
          : Step.IGNORE;
    } else if (event instanceof StateEvent.Reconnected reconnected) {
      return reconnected.session() == owner
          ? new Step.Verify(epoch, nodes, owner)
          : lose("the session that held it ended");
    } else if (event instanceof StateEvent.Verified verified) {
      return verified(verified);
    } else if (event instanceof StateEvent.SessionLost) {
      return lose("the session was lost");
    } else if (event instanceof StateEvent.Expire expire) {
      expire.taken().set(true);
      return new Step.Both(lose(expire.reason()), new Step.Discard(nodes));
    } else if (event instanceof StateEvent.Closed) {
      return lose("the Curator client was closed");
    } else if (event instanceof StateEvent.OwnNodeChanged changed) {
      ownNodeWatched = !changed.deleted();
      return changed.deleted() ? lose("our lock node was deleted") : watchOwnNode();
    } else if (event instanceof StateEvent.QueueChanged) {
      return watchOwnNodeInTime();
    } else if (event instanceof StateEvent.OwnNodeWatchDue) {
      watchScheduled = false;
      return ownNodeWatched || !singleQueue ? Step.IGNORE : watchOwnNode();
    } else if (event instanceof StateEvent.OwnNodeRead read) {
      return read.purpose() == Step.Purpose.WATCH && read.revokeRequested()
          ? new Step.Revoke()
          : Step.IGNORE;
    } else if (event instanceof StateEvent.OwnNodeReadFailed failed
        && failed.purpose() == Step.Purpose.WATCH) {
      ownNodeWatched = false;
      return Retries.code(failed.failure()) == Code.NONODE
          ? lose("our lock node was deleted")
          : Step.IGNORE;
    }
    return Step.IGNORE; // a waiter's events mean nothing to a hold; a withdrawal comes too late
  }

  private Step verified(StateEvent.Verified verified) {
    if (!verified.stillOurs()) {
      return lose("our lock node is gone or no longer ours after reconnecting");
    }
    ownNodeWatched |= singleQueue;
    if (verified.connected() && tenure.restore()) {
      return new Step.Notify(LockState.HELD, token, "reconnected, our node verified");
    }
    return Step.IGNORE;
  }

  /**
   * Watches our own node at the end of the grace: at once if it is over, else later (once). A
   * multi-lock watches none of its nodes: it notices loss through the session.
   */
  private Step watchOwnNodeInTime() {
    if (ownNodeWatched || watchScheduled || !singleQueue) {
      return Step.IGNORE;
    }
    long remaining = watchDueNanos - clock.getAsLong();
    if (remaining <= 0) {
      return watchOwnNode();
    }
    watchScheduled = true;
    long millis = TimeUnit.NANOSECONDS.toMillis(remaining + TimeUnit.MILLISECONDS.toNanos(1) - 1);
    return new Step.WatchOwnNodeLater(epoch, millis);
  }

  /** Watches our own node from now on: its deletion, or a revocation request, is heard. */
  private Step watchOwnNode() {
    ownNodeWatched = true;
    return new Step.ReadOwnNode(epoch, nodes.get(0), Step.Purpose.WATCH, true);
  }

  private Step lose(String reason) {
    tenure.lose(reason);
    return new Step.Notify(LockState.LOST, token, reason);
  }

  private Step release() {
    String lost = tenure.lostBeforeRelease();
    return tenure.release() ? new Step.Release(nodes, token, lost) : Step.IGNORE;
  }
}

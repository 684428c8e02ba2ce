package io.lockstep.recipes.locks;

import java.util.List;
import org.apache.zookeeper.KeeperException.Code;

/**
 * A granted hold, as its {@link AcquisitionState} sees it: HELD, AT_RISK, LOST or RELEASED, whether
 * its own node is watched, and why it was lost. Made at the grant; from then on every event of the
 * acquisition comes here. Not thread-safe: used only under the owning state's lock.
 *
 * <pre>
 *   HELD --Suspended--&gt; AT_RISK --Verified, connected--&gt; HELD
 *   HELD, AT_RISK --own node gone, session lost or new, client closed--&gt; LOST
 *   HELD, AT_RISK, LOST --Release--&gt; RELEASED
 * </pre>
 */
final class Hold {
  private final int epoch;
  private final long token;
  private final List<String> nodes;
  private final long owner;
  private final boolean singleQueue;
  private Phase phase;
  private boolean ownNodeWatched; // a data watch on our (first) node is armed
  private String lostReason;

  /**
   * @param connected the connection's state as the grant came: a grant while disconnected is at
   *     risk from the start
   * @param ownNodeWatched whether the read that led to the grant left a watch on our node
   */
  Hold(
      int epoch,
      long token,
      List<String> nodes,
      long owner,
      boolean connected,
      boolean ownNodeWatched) {
    this.epoch = epoch;
    this.token = token;
    this.nodes = List.copyOf(nodes);
    this.owner = owner;
    this.singleQueue = nodes.size() == 1;
    this.phase = connected ? Phase.HELD : Phase.AT_RISK;
    this.ownNodeWatched = ownNodeWatched;
  }

  /** The step that announces this hold. */
  Step.Grant grant(boolean revokeRequested) {
    return new Step.Grant(token, phase == Phase.AT_RISK, revokeRequested);
  }

  Phase phase() {
    return phase;
  }

  String lostReason() {
    return lostReason;
  }

  /** One event in (its epoch already checked), the next step out. */
  Step on(StateEvent event) {
    if (event instanceof StateEvent.Release) {
      return release();
    }
    if (!phase.isHolding()) {
      return Step.IGNORE; // LOST or RELEASED: only a release moves it
    }
    if (event instanceof StateEvent.Suspended) {
      return phase == Phase.HELD ? atRisk() : Step.IGNORE;
    } else if (event instanceof StateEvent.Reconnected reconnected) {
      return reconnected.session() == owner
          ? new Step.Verify(epoch, nodes, owner)
          : lose("the session that held it ended");
    } else if (event instanceof StateEvent.Verified verified) {
      return verified(verified);
    } else if (event instanceof StateEvent.SessionLost) {
      return lose("the session was lost");
    } else if (event instanceof StateEvent.Closed) {
      return lose("the Curator client was closed");
    } else if (event instanceof StateEvent.OwnNodeChanged changed) {
      ownNodeWatched = !changed.deleted();
      return changed.deleted() ? lose("our lock node was deleted") : watchOwnNode();
    } else if (event instanceof StateEvent.QueueChanged) {
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

  private Step atRisk() {
    phase = Phase.AT_RISK;
    return new Step.Notify(LockState.AT_RISK, token, "connection suspended");
  }

  private Step verified(StateEvent.Verified verified) {
    if (!verified.stillOurs()) {
      return lose("our lock node is gone or no longer ours after reconnecting");
    }
    ownNodeWatched |= singleQueue;
    if (phase == Phase.AT_RISK && verified.connected()) {
      phase = Phase.HELD;
      return new Step.Notify(LockState.HELD, token, "reconnected, our node verified");
    }
    return Step.IGNORE;
  }

  /** Watches our own node from now on: its deletion, or a revocation request, is heard. */
  private Step watchOwnNode() {
    ownNodeWatched = true;
    return new Step.ReadOwnNode(epoch, nodes.get(0), Step.Purpose.WATCH);
  }

  private Step lose(String reason) {
    phase = Phase.LOST;
    lostReason = reason;
    return new Step.Notify(LockState.LOST, token, reason);
  }

  private Step release() {
    if (phase == Phase.RELEASED) {
      return Step.IGNORE;
    }
    String lost = phase == Phase.LOST ? lostReason : null;
    phase = Phase.RELEASED;
    return new Step.Release(nodes, token, lost);
  }
}

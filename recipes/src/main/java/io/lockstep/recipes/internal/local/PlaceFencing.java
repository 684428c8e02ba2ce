package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.internal.engine.Phase;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import java.util.List;

/**
 * The fencing columns of a {@link PlaceMachine}'s table, and what a member holds for its ownership
 * checks: a holder asks for its fence (token and check version), and a write of the place's node
 * answers. The bookkeeping is its {@link Fence}; the handing on that waits for a write is the
 * machine's. Used only under the place's lock.
 */
final class PlaceFencing {
  private final PlaceMachine m;

  PlaceFencing(PlaceMachine machine) {
    this.m = machine;
  }

  /** What {@code member} holds, or null if it does not hold (any more). */
  PlaceState.Held heldBy(Contender member) {
    return m.holder == member && member.tenure.isHolding()
        ? new PlaceState.Held(m.node, m.owner, member.token, member.version)
        : null;
  }

  /**
   * What {@code member} holds, recording that it hands out checks of its version (the next handoff
   * then writes the node first); null if it does not hold (any more).
   */
  PlaceState.Held takeChecks(Contender member) {
    if (m.holder != member || !member.tenure.isHolding() || member.version < 0) {
      return null;
    }
    checksTaken(member);
    return new PlaceState.Held(m.node, m.owner, member.token, member.version);
  }

  /** The place's node and owner as {@code member} knew them (also once lost), or null. */
  PlaceState.Held lastHeldBy(Contender member) {
    return member.tenure == null
        ? null
        : new PlaceState.Held(m.node, m.owner, member.token, member.version);
  }

  private void checksTaken(Contender member) {
    if (m.holder == member && member.version == m.fence.version) {
      m.fence.checksTaken = true;
    }
  }

  void asked(PlaceEvent.FenceAsked asked, List<PlaceStep> steps) {
    Contender member = asked.member();
    member.fenceReady = asked.ready();
    if (m.holder != member || !member.tenure.isHolding()) {
      steps.add(new PlaceStep.FenceRefused(member, notHolding(member)));
    } else if (member.token != 0) {
      steps.add(new PlaceStep.FenceReady(member));
    } else if (!m.fence.tokenTaken && m.fence.write == 0) {
      member.token = m.fence.token;
      member.version = m.fence.version;
      m.fence.tokenTaken = true;
      steps.add(new PlaceStep.FenceReady(member));
    } else {
      member.fencePending = true;
      if (m.fence.write == 0) {
        m.write(true, steps);
      }
    }
  }

  void written(PlaceEvent.FenceWritten written, List<PlaceStep> steps) {
    if (written.place() != m.place
        || m.phase != PlaceState.Phase.HELD
        || !m.fence.isOut(written.write())) {
      return;
    }
    m.fence.written(written.zxid(), written.version());
    if (m.holder != null && m.holder.fencePending) {
      m.holder.fencePending = false;
      m.holder.token = m.fence.token;
      m.holder.version = m.fence.version;
      m.fence.tokenTaken = true;
      steps.add(new PlaceStep.FenceReady(m.holder));
    }
    m.resume(written.placeLost(), steps);
  }

  void failed(PlaceEvent.FenceFailed failed, List<PlaceStep> steps) {
    if (failed.place() != m.place
        || m.phase != PlaceState.Phase.HELD
        || !m.fence.isOut(failed.write())) {
      return;
    }
    boolean handoff = !m.fence.forHolder;
    m.fence.write = 0;
    m.fence.tokenTaken = true; // the version may have moved: the next token needs a write
    if (failed.nodeGone()) {
      m.lose("our lock node was deleted", steps);
      return;
    }
    if (m.holder != null && m.holder.fencePending) {
      refuse(m.holder, failed.failure(), steps);
    }
    if (handoff && m.holder == null) {
      m.giveBackAndRetake(null, steps); // the old checks may still pass: their node must go
    }
  }

  static void refuse(Contender member, RuntimeException failure, List<PlaceStep> steps) {
    if (member.fencePending) {
      member.fencePending = false;
      steps.add(new PlaceStep.FenceRefused(member, failure));
    }
  }

  /** Why {@code member} gets no fence; the member words it for its caller. */
  static RuntimeException notHolding(Contender member) {
    if (member.tenure != null && member.tenure.phase() == Phase.LOST) {
      return new LockOwnershipLostException(member.tenure.lostReason());
    }
    return new IllegalStateException("this hold was let go");
  }
}

package io.lockstep.recipes.locks;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Cohort locking: the one place a process takes in a lock's queue, shared by the local contenders
 * of every lock object of one client on that path that asked for local handoff. The place is an
 * ordinary node (so Curator and other processes see an ordinary queue); its holds are passed from
 * local member to local member in memory, and the place goes back to ZooKeeper when no member
 * waits, or when it has been passed on a bounded number of times in a row while another participant
 * may wait behind it.
 *
 * <p>Fencing stays honest: the first member to hold a place gets its node's czxid as token; a later
 * member that asks for its token or its ownership checks first writes the node (a version bump),
 * and gets that write's zxid, greater than every earlier one, and a check of that version, which an
 * earlier member's check no longer passes.
 */
final class Cohort {
  /*
   * Algorithm notes.
   *
   * Repeatedly: a member joins and waits in FIFO order; if the process has no place, one is taken
   * (an Acquisition). When the place is granted, the first waiter holds. When a member releases:
   * the next waiter holds if there is one and fewer than maxInARow handoffs happened in a row;
   * otherwise the place is released, and taken again at the tail if members still wait.
   *
   * At the bound, the place is passed on only if nobody else may wait, and that is known only from
   * a read of the queue: a participant that queued after our last read is heard of through the
   * child watch a notification later, by which time tens of handoffs in memory have gone by. So
   * the hold that reaches the bound sends a read of the queue (while it holds, so a hold of any
   * length hides the round trip); the handoff after it waits for the answer. Only our node: a new
   * window of maxInARow handoffs begins. Anyone else, a failed read, or a sign seen earlier (a
   * granting read that was not alone, a queue change heard): the place goes back. Whoever queued
   * after one read is found by the next, at most maxInARow holds later. The place's AT_RISK, HELD
   * and LOST go to the member holding; they come through the place's own hook, so news of a place
   * already given back is ignored. A place may be lost before its notice arrives: every handoff
   * reads its phase first, and a lost place goes back instead of on.
   */

  private final ReentrantLock lock = new ReentrantLock();
  private final LockContext placeContext;
  private final Slot slot;

  @GuardedBy("lock")
  private Acquisition place; // the process's attempt or hold; null when it has no node

  @GuardedBy("lock")
  private boolean placeHeld;

  @GuardedBy("lock")
  private final Deque<CohortMember> waiting = new ArrayDeque<>();

  @GuardedBy("lock")
  private CohortMember holder;

  @GuardedBy("lock")
  private int inARow; // local handoffs since the place was granted, or since a read found it alone

  @GuardedBy("lock")
  private boolean othersSeen; // this place had a sign of another participant, granted or not

  @GuardedBy("lock")
  private boolean checking; // a read of the queue, sent at the bound, has not been answered yet

  Cohort(CuratorFramework client, String path, Slot slot) {
    this.placeContext = new LockContext(client, path, "cohort");
    this.slot = slot;
  }

  /** A member of {@code context} joins: it waits for its turn, and a place is taken if needed. */
  CohortMember join(LockContext context, int maxInARow) {
    CohortMember member = new CohortMember(this, context, maxInARow);
    lock.lock();
    try {
      waiting.add(member);
      if (place == null) {
        takePlace();
      }
    } finally {
      lock.unlock();
    }
    return member;
  }

  /** A holding member lets go: the next member holds, or the place goes back to ZooKeeper. */
  void release(CohortMember member) {
    Handover handover;
    lock.lock();
    try {
      if (holder != member) {
        return; // lost, and the place already let go
      }
      holder = null;
      handover = passOn(member.maxInARow());
    } finally {
      lock.unlock();
    }
    carryOut(handover);
  }

  /** A waiting member gives up; the place is withdrawn if nobody needs it any more. */
  Attempt.Outcome withdraw(CohortMember member) {
    Acquisition unwanted = null;
    lock.lock();
    try {
      if (!waiting.remove(member)) {
        return holder == member || member.phase().wasGranted()
            ? Attempt.Outcome.GRANTED
            : Attempt.Outcome.FAILED;
      }
      if (waiting.isEmpty() && holder == null && place != null && !placeHeld) {
        unwanted = place;
        place = null;
      }
    } finally {
      lock.unlock();
    }
    if (unwanted != null
        && unwanted.withdraw(AcquireOutcome.WITHDRAWN) == Attempt.Outcome.GRANTED) {
      unwanted.release(); // granted at the same moment: nobody wants it
    }
    member.withdrawn(unwanted == null ? null : unwanted.cleanedUp());
    return Attempt.Outcome.WITHDRAWN;
  }

  /**
   * Writes the place's node so that {@code member}, holding, gets a token greater than every
   * earlier one and a check of the new version.
   */
  void fence(CohortMember member) {
    String node = member.nodePaths().get(0);
    byte[] data = slot.data() == null ? new byte[0] : slot.data();
    Stat stat;
    try {
      stat = placeContext.client().setData().forPath(node, data);
    } catch (KeeperException.NoNodeException gone) {
      member.lost("our lock node was deleted");
      throw new LockOwnershipLostException(
          "Lock " + placeContext.description() + " was lost: its node " + node + " is gone");
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new LockException(
          "Lock " + placeContext.description() + ": could not write its fence: " + e, e);
    }
    member.fenced(stat.getMzxid(), stat.getVersion());
  }

  /**
   * What a release decided, carried out outside the lock: the member now holding is told, or the
   * place is given back (and taken again if members wait). Both null: nothing to do yet.
   */
  private record Handover(CohortMember next, Acquisition giveBack) {
    static final Handover NONE = new Handover(null, null);
  }

  /**
   * After a hold with bound {@code maxInARow}: the next member holds, the place goes back, or, when
   * the bound is reached and the read sent at it has not answered, the place waits for it.
   */
  @GuardedBy("lock")
  private Handover passOn(int maxInARow) {
    if (!placeHeld) {
      return Handover.NONE;
    }
    if (waiting.isEmpty() || placeLost() || (inARow >= maxInARow && othersSeen)) {
      return giveBack();
    }
    if (inARow >= maxInARow) {
      if (!checking) {
        checkQueue(); // sent at this hold's grant already; here so that no path can strand it
      }
      return Handover.NONE; // checked() passes the place on
    }
    return handTo(waiting.poll());
  }

  @GuardedBy("lock")
  private Handover handTo(CohortMember next) {
    holder = next;
    inARow++;
    grantTo(next, place, false);
    if (inARow >= next.maxInARow() && !othersSeen && !checking) {
      checkQueue();
    }
    return new Handover(next, null);
  }

  /**
   * Whether the place is lost already although its notice (see {@link #placeChanged}) has not
   * reached us yet: it must not be handed on.
   */
  @GuardedBy("lock")
  private boolean placeLost() {
    return !place.view().phase().isHolding();
  }

  @GuardedBy("lock")
  private Handover giveBack() {
    Acquisition given = place;
    place = null;
    placeHeld = false;
    return new Handover(null, given);
  }

  private void carryOut(Handover handover) {
    if (handover.next() != null) {
      handover.next().announce();
    }
    if (handover.giveBack() != null) {
      handover.giveBack().release(); // deleted in this thread, as a release always is
      retakeIfWaiting();
    }
  }

  /**
   * Reads the queue: whether the place is still alone in it decides the handoffs past the bound.
   */
  @GuardedBy("lock")
  private void checkQueue() {
    checking = true;
    Acquisition checked = place;
    String ourName = ZKPaths.getNodeFromPath(checked.view().nodes().get(0));
    Callbacks.when(
        placeContext.zk().childrenOnce(List.of(slot.path()), null),
        (children, failure) -> {
          boolean alone = failure == null && children.lists().get(0).equals(List.of(ourName));
          placeContext.scheduler().execute(() -> checked(checked, alone));
        });
  }

  /**
   * The read sent at the bound answered: alone, and no queue change heard since (a change after the
   * read may be heard before this runs), a new window of handoffs begins; otherwise (someone
   * queued, our node is gone, or the read failed) the place goes back at the bound. A place waiting
   * for this answer is passed on or given back now.
   */
  private void checked(Acquisition checked, boolean alone) {
    Handover handover = Handover.NONE;
    lock.lock();
    try {
      if (checked != place || !checking) {
        return; // given back or lost meanwhile
      }
      checking = false;
      boolean stillAlone = alone && !othersSeen;
      if (stillAlone) {
        inARow = 0;
      } else {
        othersSeen = true;
      }
      if (placeHeld && holder == null) {
        handover =
            stillAlone && !waiting.isEmpty() && !placeLost() ? handTo(waiting.poll()) : giveBack();
      }
    } finally {
      lock.unlock();
    }
    carryOut(handover);
  }

  @GuardedBy("lock")
  private void takePlace() {
    othersSeen = false;
    checking = false;
    Acquisition taking = Acquisition.start(placeContext, List.of(slot), null);
    place = taking;
    taking.onQueueChanged(() -> queueChanged(taking));
    taking.onStateChanged(state -> placeChanged(taking, state));
    Callbacks.when(taking.grantedFuture(), (v, failure) -> placeEnded(taking, failure));
  }

  private void retakeIfWaiting() {
    lock.lock();
    try {
      if (place == null && !waiting.isEmpty()) {
        takePlace();
      }
    } finally {
      lock.unlock();
    }
  }

  /** The place was granted, or its attempt ended without a grant. */
  private void placeEnded(Acquisition taking, Throwable failure) {
    Handover handover = Handover.NONE;
    List<CohortMember> failed = new ArrayList<>();
    lock.lock();
    try {
      if (place != taking) {
        return; // withdrawn because nobody needed it: its own end deals with a racing grant
      }
      if (failure != null) {
        place = null;
        failed.addAll(waiting);
        waiting.clear();
      } else {
        placeHeld = true;
        inARow = 0;
        // the grant reaches us through the notifier, so the granting read's child watch may
        // already have fired: a change heard meanwhile (othersSeen) counts as much as one later
        othersSeen = othersSeen || !taking.view().alone();
        if (waiting.isEmpty() || placeLost()) {
          handover = giveBack(); // everyone gave up meanwhile, or it was lost on its way to us
        } else {
          holder = waiting.poll();
          grantTo(holder, taking, true);
          handover = new Handover(holder, null);
        }
      }
    } finally {
      lock.unlock();
    }
    carryOut(handover);
    for (CohortMember member : failed) {
      member.failed(failureOf(taking, failure));
    }
  }

  /** Hands the place to {@code member}; the first member after a grant keeps the czxid. */
  private static void grantTo(CohortMember member, Acquisition holding, boolean firstOfPlace) {
    AcquisitionState.View view = holding.view();
    member.grant(view.nodes().get(0), view.token(), view.owner(), firstOfPlace, view.phase());
  }

  /**
   * Someone changed the queue behind the place: another participant may wait. A place already given
   * back hears its own delete: that is no sign of anyone.
   */
  private void queueChanged(Acquisition changedFor) {
    lock.lock();
    try {
      if (changedFor != place) {
        return;
      }
      othersSeen = true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * The place's state changed: tell the member holding; a lost place is given up and retaken. News
   * of a place already given back, or of one not granted yet (a grant reads the phase), is stale.
   */
  private void placeChanged(Acquisition changed, LockState state) {
    CohortMember holding;
    Acquisition lost = null;
    lock.lock();
    try {
      if (changed != place || !placeHeld) {
        return;
      }
      holding = holder;
      if (state == LockState.LOST) {
        lost = place;
        place = null;
        placeHeld = false;
        holder = null;
      }
    } finally {
      lock.unlock();
    }
    if (holding != null) {
      holding.placeChanged(state, lost == null ? null : "the lock's node or session was lost");
    }
    if (lost != null) {
      lost.release(); // clears it; the lost member's own release then does nothing more
      retakeIfWaiting();
    }
  }

  private static RuntimeException failureOf(Acquisition taking, Throwable failure) {
    RuntimeException reason = taking.failure();
    if (reason != null) {
      return reason;
    }
    return failure instanceof RuntimeException
        ? (RuntimeException) failure
        : new LockException("Lock attempt failed: " + failure, failure);
  }
}

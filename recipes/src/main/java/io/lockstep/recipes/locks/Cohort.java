package io.lockstep.recipes.locks;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.framework.CuratorFramework;
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
   * Repeatedly: a member joins; if the place is held and free, the member holds at once; else it
   * waits in FIFO order and, if the process has no place, one is taken (an Acquisition). When the
   * place is granted, the first waiter holds. When a member releases: the next waiter holds if
   * there is one and (nobody else may wait, or fewer than maxInARow handoffs happened in a row);
   * otherwise the place is released, and taken again if members still wait, at the tail.
   * "Nobody else may wait": the place was granted by a read that found it alone, no change of the
   * queue was heard since it was asked for, and the place before it had no sign of others either
   * (another process that was waiting re-enqueues moments after we give the place back, possibly
   * just after the read of our next place, and we hear of it only a notification later). The
   * place's AT_RISK, HELD and LOST go to the member holding.
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
  private int inARow; // local handoffs since the place was granted

  @GuardedBy("lock")
  private boolean othersSeen; // this place had a sign of another participant, granted or not

  @GuardedBy("lock")
  private boolean othersSeenBefore; // the place before this one had

  Cohort(CuratorFramework client, String path, Slot slot) {
    this.placeContext = new LockContext(client, path, "cohort");
    this.slot = slot;
    placeContext.listeners().addListener(change -> placeChanged(change.state()));
  }

  /** A member of {@code context} joins: holds at once, or waits for its turn. */
  CohortMember join(LockContext context, int maxInARow) {
    CohortMember member = new CohortMember(this, context, maxInARow);
    boolean holdsNow = false;
    lock.lock();
    try {
      if (placeHeld && holder == null && waiting.isEmpty() && !mustYield(maxInARow)) {
        holder = member;
        inARow++;
        grantTo(member, place, false);
        holdsNow = true;
      } else {
        waiting.add(member);
        if (place == null) {
          takePlace();
        }
      }
    } finally {
      lock.unlock();
    }
    if (holdsNow) {
      member.announce();
    }
    return member;
  }

  /** A holding member lets go: the next member holds, or the place goes back to ZooKeeper. */
  void release(CohortMember member) {
    CohortMember next = null;
    Acquisition giveBack = null;
    lock.lock();
    try {
      if (holder != member) {
        return; // lost, and the place already let go
      }
      holder = null;
      if (placeHeld && !waiting.isEmpty() && !mustYield(member.maxInARow())) {
        holder = next = waiting.poll();
        grantTo(next, place, false);
        inARow++;
      } else if (placeHeld) {
        giveBack = place;
        place = null;
        placeHeld = false;
      }
    } finally {
      lock.unlock();
    }
    if (next != null) {
      next.announce();
    }
    if (giveBack != null) {
      giveBack.release(); // deleted in the caller's thread, as a release always is
      retakeIfWaiting();
    }
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

  @GuardedBy("lock")
  private boolean mustYield(int maxInARow) {
    return (othersSeen || othersSeenBefore) && inARow >= maxInARow;
  }

  @GuardedBy("lock")
  private void takePlace() {
    othersSeenBefore = othersSeen;
    othersSeen = false;
    Acquisition taking = Acquisition.start(placeContext, List.of(slot), null);
    place = taking;
    taking.onQueueChanged(() -> queueChanged(taking));
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
    CohortMember first = null;
    boolean unneeded = false;
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
        first = waiting.poll();
        if (first == null) {
          place = null; // everyone gave up meanwhile
          placeHeld = false;
          unneeded = true;
        } else {
          holder = first;
          grantTo(first, taking, true);
        }
      }
    } finally {
      lock.unlock();
    }
    if (first != null) {
      first.announce();
    }
    if (unneeded) {
      taking.release();
    }
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

  /** The place's state changed: tell the member holding; a lost place is given up and retaken. */
  private void placeChanged(LockState state) {
    CohortMember holding;
    Acquisition lost = null;
    lock.lock();
    try {
      holding = holder;
      if (state == LockState.LOST && placeHeld) {
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

package io.lockstep.recipes.spring;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.owner.Ownership;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The time-to-live deadlines of one lock object's holds, one per holding thread ({@link
 * HoldDeadline}): when a hold outlives its deadline, the engine gives it up as lost. Deadlines are
 * kept by the engine's scheduler, one timer per deadline at a time, never a thread per lock.
 */
final class HoldDeadlines {
  /* Algorithm notes:
   *
   * A deadline is made when a thread's hold gets a TTL, and ends when the thread's last unlock lets
   * the hold go. HoldDeadline orders renewals against its timer, and the engine orders the expiry
   * against the unlock: if the expiry came first, the hold was LOST when the unlock released it, and
   * the unlock throws ConcurrentModificationException, as Spring's JDBC and Redis registries do for
   * a lock whose record expired; otherwise the expiry finds the hold released and does nothing.
   * A hold unlocked through the lock's view leaves its deadline in the map: every look-up
   * (granted, renew, unlock) drops a deadline that is not for the thread's current hold.
   */

  private final Ownership ownership;
  private final String description;
  private final ConcurrentMap<Thread, HoldDeadline> byThread = new ConcurrentHashMap<>();

  HoldDeadlines(Ownership ownership) {
    this.ownership = ownership;
    this.description = ownership.settings().description();
  }

  /**
   * The calling thread was granted (or re-entered) its hold: with a {@code ttl}, its deadline is
   * set to {@code ttl} from now; without one, a deadline it has stays as it is.
   */
  void granted(Duration ttl) {
    if (ttl == null) {
      return;
    }
    Attempt hold = ownership.current();
    HoldDeadline deadline = deadlineOf(hold);
    if (deadline != null) {
      // Fails if the time to live ran out as the hold was re-entered: the deadline is kept, so
      // that the last unlock reports the expiry.
      var unused = deadline.extend(ttl);
      return;
    }
    deadline = new HoldDeadline(hold, false);
    byThread.put(Thread.currentThread(), deadline);
    deadline.extend(ttl);
  }

  /**
   * The calling thread's deadline for {@code hold}, or null. A deadline left by an earlier hold of
   * the thread (one unlocked through the lock's view, which knows no deadlines) is dropped: it must
   * neither time nor report on a later hold.
   */
  private HoldDeadline deadlineOf(Attempt hold) {
    Thread thread = Thread.currentThread();
    HoldDeadline deadline = byThread.get(thread);
    if (deadline == null || deadline.isFor(hold)) {
      return deadline;
    }
    byThread.remove(thread, deadline);
    deadline.end();
    return null;
  }

  /**
   * Renews the calling thread's hold for {@code ttl} from now, or for the time to live it has if
   * {@code ttl} is null (a hold without one keeps none).
   *
   * @throws IllegalMonitorStateException if the calling thread does not hold the lock
   * @throws IllegalStateException if the hold was lost or its time to live ran out
   */
  void renew(Duration ttl, Object key) {
    Attempt hold = ownership.current(); // IllegalMonitorStateException if the thread does not hold
    HoldDeadline deadline = deadlineOf(hold);
    try {
      hold.checkNotLost();
    } catch (LockOwnershipLostException lost) {
      throw new IllegalStateException("Could not renew lock for: " + key + ": it was lost", lost);
    }
    Duration renewed = ttl != null ? ttl : deadline == null ? null : deadline.ttl();
    if (renewed == null) {
      return;
    }
    if (deadline != null && !deadline.extend(renewed)) { // the thread holds: only expiry ends it
      throw new IllegalStateException(
          "Could not renew lock for: " + key + ": its time to live ran out");
    }
    if (deadline != null) {
      return;
    }
    granted(renewed);
  }

  /**
   * The loss stage of the calling thread's hold: the hold's own ({@link Attempt#lostFuture()}), so
   * a later hold of the lock, by this thread or another, never completes it.
   *
   * @throws IllegalMonitorStateException if the calling thread does not hold the lock
   */
  CompletionStage<LockOwnershipLostException> whenLost() {
    return ownership.current().lostFuture();
  }

  /**
   * Lets the calling thread's hold go, by {@code unlock} (the lock's own release); on its last
   * unlock, the deadline ends.
   *
   * @throws ConcurrentModificationException if the hold had expired: it was LOST, its node deleted,
   *     and the unlock cleared it
   */
  void unlock(Runnable unlock) {
    Thread thread = Thread.currentThread();
    boolean last = ownership.holdCount() == 1;
    Attempt hold = last ? ownership.current() : null;
    HoldDeadline deadline = last ? byThread.remove(thread) : null;
    unlock.run(); // throws IllegalMonitorStateException if not held: then nothing was removed
    if (deadline != null) {
      deadline.end();
      if (deadline.expired() && deadline.isFor(hold)) { // not an earlier hold's, left behind
        throw new ConcurrentModificationException(
            "Lock "
                + description
                + " was released in ZooKeeper because its time to live ran out; the integrity of"
                + " data protected by this lock may have been compromised");
      }
    }
  }
}

package io.lockstep.recipes.spring;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.owner.Ownership;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The time-to-live deadlines of one lock object's holds, one per holding thread: when a hold
 * outlives its deadline, the engine gives it up as lost ({@link Attempt#expire}): its node is
 * deleted in the background and the hold is LOST. Deadlines are kept by the engine's scheduler, one
 * timer per deadline at a time, never a thread per lock.
 */
final class HoldDeadlines {
  /* Algorithm notes:
   *
   * A Deadline is made when a thread's hold gets a TTL, and ends when the thread's last unlock lets
   * the hold go. Its small lock orders renewals against the timer: the timer, finding the deadline
   * passed, marks it expiring under the lock, then asks the engine to expire the hold; a renewal
   * under the lock fails once it is expiring. The engine orders the expiry against the unlock (the
   * hold's state takes one event at a time): if the expiry came first, the hold was LOST when the
   * unlock released it, and the unlock throws ConcurrentModificationException, as Spring's JDBC and
   * Redis registries do for a lock whose record expired; otherwise the expiry finds the hold
   * released and does nothing. The expiry deletes the hold's own nodes only (a guaranteed delete of
   * its paths), so a later hold, with nodes of its own, is never touched.
   *
   * A timer that finds the deadline moved later sets itself again for the rest. A renewal that
   * moves it earlier sets one more timer; the one that fires late finds nothing to do.
   */

  private final Ownership ownership;
  private final String description;
  private final ConcurrentMap<Thread, Deadline> byThread = new ConcurrentHashMap<>();

  HoldDeadlines(Ownership ownership) {
    this.ownership = ownership;
    this.description = ownership.settings().description();
  }

  /** The deadline of one thread's hold. */
  private final class Deadline {
    private final ReentrantLock lock = new ReentrantLock(); // bookkeeping only, never a wait

    @GuardedBy("lock")
    private Attempt hold; // null once the hold was let go or expired

    @GuardedBy("lock")
    private Duration ttl;

    @GuardedBy("lock")
    private long dueNanos;

    @GuardedBy("lock")
    private long timerDueNanos = Long.MAX_VALUE; // when the earliest pending timer fires

    /** Set by the engine, under the hold's state lock, if the expiry made the hold LOST. */
    private final AtomicBoolean expired = new AtomicBoolean();

    Deadline(Attempt hold) {
      this.hold = hold;
    }

    /** Sets the deadline to {@code ttl} from now; false if the hold is expiring or gone. */
    boolean extend(Duration ttl) {
      long due = ownership.settings().now() + ttl.toNanos();
      lock.lock();
      try {
        if (hold == null) {
          return false;
        }
        this.ttl = ttl;
        this.dueNanos = due;
        if (due - timerDueNanos < 0 || timerDueNanos == Long.MAX_VALUE) {
          arm(due);
        }
        return true;
      } finally {
        lock.unlock();
      }
    }

    Duration ttl() {
      lock.lock();
      try {
        return ttl;
      } finally {
        lock.unlock();
      }
    }

    @GuardedBy("lock")
    private void arm(long due) {
      timerDueNanos = due;
      long millis =
          TimeUnit.NANOSECONDS.toMillis(Math.max(0, due - ownership.settings().now()) + 999_999);
      ownership.settings().scheduler().schedule(millis, this::due);
    }

    /** A timer fired: expire the hold if its deadline passed, else wait for the rest. */
    private void due() {
      Attempt expiring;
      Duration lived;
      lock.lock();
      try {
        timerDueNanos = Long.MAX_VALUE;
        if (hold == null) {
          return;
        }
        if (dueNanos - ownership.settings().now() > 0) {
          arm(dueNanos);
          return;
        }
        expiring = hold;
        lived = ttl;
        hold = null; // renewals fail from now on
      } finally {
        lock.unlock();
      }
      expiring.expire("its time to live (" + lived + ") ran out", expired);
    }

    /** The hold is let go: no timer acts on it any more. */
    void end() {
      lock.lock();
      try {
        hold = null;
      } finally {
        lock.unlock();
      }
    }
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
    Thread thread = Thread.currentThread();
    Deadline deadline = byThread.get(thread);
    if (deadline == null || !deadline.extend(ttl)) {
      deadline = new Deadline(hold); // a first TTL, or one left by a hold this thread let go
      byThread.put(thread, deadline);
      deadline.extend(ttl);
    }
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
    Deadline deadline = byThread.get(Thread.currentThread());
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
   * Lets the calling thread's hold go, by {@code unlock} (the lock's own release); on its last
   * unlock, the deadline ends.
   *
   * @throws ConcurrentModificationException if the hold had expired: it was LOST, its node deleted,
   *     and the unlock cleared it
   */
  void unlock(Runnable unlock) {
    Thread thread = Thread.currentThread();
    boolean last = ownership.holdCount() == 1;
    Deadline deadline = last ? byThread.remove(thread) : null;
    unlock.run(); // throws IllegalMonitorStateException if not held: then nothing was removed
    if (deadline != null) {
      deadline.end();
      if (deadline.expired.get()) {
        throw new ConcurrentModificationException(
            "Lock "
                + description
                + " was released in ZooKeeper because its time to live ran out; the integrity of"
                + " data protected by this lock may have been compromised");
      }
    }
  }
}

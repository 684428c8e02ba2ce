package io.lockstep.recipes.spring;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.engine.Phase;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The time-to-live deadline of one hold: when the hold outlives it, the engine gives it up as lost
 * ({@link Attempt#expire}): its node is deleted in the background and the hold is LOST. Kept by the
 * engine's scheduler, one timer at a time, never a thread.
 *
 * <p>A deadline that renews itself moves to its time to live from now at each timer (every half
 * time to live) that finds the hold {@code HELD}: while the connection is up it never falls due;
 * once the hold is {@code AT_RISK} (its connection suspended), it falls due a time to live after
 * the last timer that found it held, so between half a time to live and a whole one after the
 * suspension began.
 */
final class HoldDeadline {
  /* Algorithm notes:
   *
   * The small lock orders renewals against the timer: the timer, finding the deadline passed, marks
   * it expiring under the lock (hold = null), then asks the engine to expire the hold; a renewal
   * under the lock fails once it is expiring. The engine orders the expiry against a release (the
   * hold's state takes one event at a time): if the expiry came first, the hold was LOST when the
   * release cleared it, and `expired` is set; otherwise the expiry finds the hold released and does
   * nothing. The expiry deletes the hold's own nodes only (a guaranteed delete of its paths), so a
   * later hold, with nodes of its own, is never touched.
   *
   * A timer that finds the deadline moved later sets itself again for the rest (a renewing one for
   * half a time to live at most). A renewal that moves it earlier sets one more timer; the one that
   * fires late finds nothing to do.
   */

  private static final long MIN_RENEWAL_NANOS = 1_000_000;

  private final LockSettings settings;
  private final Attempt timed; // the hold this deadline is for, for good
  private final boolean renewing; // renews itself while the hold is HELD
  private final ReentrantLock lock = new ReentrantLock(); // bookkeeping only, never a wait

  @GuardedBy("lock")
  private Attempt hold; // null once the hold was let go or is expiring

  private volatile Duration ttl; // null until the first extend; written under the lock

  @GuardedBy("lock")
  private long dueNanos;

  @GuardedBy("lock")
  private boolean timerPending; // a timer is set, for timerDueNanos

  @GuardedBy("lock")
  private long timerDueNanos; // when the earliest pending timer fires

  /** Set by the engine, under the hold's state lock, if the expiry made the hold LOST. */
  private final AtomicBoolean expired = new AtomicBoolean();

  /**
   * @param hold a granted hold
   * @param renewing whether the deadline renews itself while the hold is HELD
   */
  HoldDeadline(Attempt hold, boolean renewing) {
    this.hold = hold;
    this.timed = hold;
    this.settings = hold.settings();
    this.renewing = renewing;
  }

  /** Whether this is the deadline of {@code attempt}'s hold (expiring or not). */
  boolean isFor(Attempt attempt) {
    return timed == attempt;
  }

  /** Sets the deadline to {@code ttl} from now; false if the hold is expiring or was let go. */
  boolean extend(Duration ttl) {
    long now = settings.now();
    lock.lock();
    try {
      if (hold == null) {
        return false;
      }
      this.ttl = ttl;
      this.dueNanos = now + ttl.toNanos();
      long wake = nextWake(now);
      if (!timerPending || wake - timerDueNanos < 0) {
        arm(wake, now);
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** The time to live it was set or last extended with, or null if none yet. */
  Duration ttl() {
    return ttl;
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

  /** Whether the expiry made the hold LOST (read after the hold was released). */
  boolean expired() {
    return expired.get();
  }

  /**
   * When the next timer should fire: the deadline, or for a renewing one half a time to live (a
   * millisecond at least, so that a tiny time to live does not keep the scheduler spinning).
   */
  @GuardedBy("lock")
  private long nextWake(long now) {
    long left = dueNanos - now;
    return renewing
        ? now + Math.min(left, Math.max(ttl.toNanos() / 2, MIN_RENEWAL_NANOS))
        : dueNanos;
  }

  @GuardedBy("lock")
  private void arm(long wake, long now) {
    timerPending = true;
    timerDueNanos = wake;
    long millis = TimeUnit.NANOSECONDS.toMillis(Math.max(0, wake - now) + 999_999);
    settings.scheduler().schedule(millis, this::due);
  }

  /** A timer fired: renew, or expire the hold if its deadline passed, or wait for the rest. */
  private void due() {
    Attempt expiring;
    Duration lived;
    lock.lock();
    try {
      timerPending = false;
      if (hold == null) {
        return;
      }
      long now = settings.now();
      if (renewing && hold.phase() == Phase.HELD) {
        dueNanos = now + ttl.toNanos();
      }
      if (dueNanos - now > 0) {
        arm(nextWake(now), now);
        return;
      }
      expiring = hold;
      lived = ttl;
      hold = null; // renewals fail from now on
    } finally {
      lock.unlock();
    }
    expiring.expire(
        renewing
            ? "its time to live ("
                + lived
                + ") ran out without a renewal: its connection was suspended"
            : "its time to live (" + lived + ") ran out",
        expired);
  }
}

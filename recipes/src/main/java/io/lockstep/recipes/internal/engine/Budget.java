package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.zk.Scheduler;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A caller's time budget, on the engine's clock, from the moment it called: the time it takes to
 * start the work counts too. Every recipe reads its deadlines from one of these, so "how much is
 * left" and "when does the timer fire" are answered in one place. It also knows when the caller's
 * work got under way ({@link #underWay()}), so that a budget spent on starting the work (a zero
 * budget, a cold first call) still leaves that work its grace. A composed lock gives one budget to
 * each of its locks in turn: the first to get under way decides when the budget falls due, so the
 * locks share one grace.
 *
 * <p>A negative budget, and {@link Long#MAX_VALUE} (as good as forever), mean none: such a budget
 * never runs out and sets no timer.
 */
public final class Budget {
  private static final long UNMARKED = -1; // no work under way yet

  private final long timeoutNanos;
  private final long startNanos;
  private final LongSupplier clock;
  private volatile long startedLateNanos = UNMARKED; // how far past the deadline work began

  private Budget(long timeoutNanos, long startNanos, LongSupplier clock) {
    this.timeoutNanos = timeoutNanos;
    this.startNanos = startNanos;
    this.clock = clock;
  }

  /**
   * A budget starting now.
   *
   * @param timeoutNanos the budget, or a negative value for none
   * @param clock the engine's clock ({@link LockSettings#now()})
   */
  public static Budget of(long timeoutNanos, LongSupplier clock) {
    return new Budget(timeoutNanos, clock.getAsLong(), clock);
  }

  /** A budget starting now, on the clock of {@code settings}' engine. */
  public static Budget of(long timeoutNanos, LockSettings settings) {
    return timeoutNanos < 0 ? NONE : of(timeoutNanos, settings.engine().clock());
  }

  /**
   * No budget, from {@link #of(long, LockSettings)}: shared, it has no start of its own ({@link
   * #startNanos()} is 0); it never runs out and sets no timer.
   */
  private static final Budget NONE = new Budget(-1, 0, () -> 0); // no clock: nothing to time

  /** Whether the budget can run out: not none, and not as good as forever. */
  public boolean bounded() {
    return timeoutNanos >= 0 && timeoutNanos != Long.MAX_VALUE;
  }

  /** The budget as the caller gave it: negative for none. */
  public long timeoutNanos() {
    return timeoutNanos;
  }

  /** When the budget started, on the engine's clock. */
  public long startNanos() {
    return startNanos;
  }

  /**
   * What is left now.
   *
   * @return the nanoseconds left, at least 0; a negative value for none; {@link Long#MAX_VALUE}
   *     minus the time spent for a budget as good as forever
   */
  public long remainingNanos() {
    return remaining(timeoutNanos, startNanos, clock.getAsLong());
  }

  /**
   * Marks the caller's work as under way (its first request sent), right after starting it. If
   * starting took the whole budget (a zero budget, a cold first call), the budget falls due now
   * rather than at its deadline, so the work still gets its grace ({@link #overdueNanos()}). Only
   * the first call counts: work started later on the same budget (the next lock of a composed one)
   * shares that grace instead of getting one of its own. Calls come one after another, never at
   * once.
   */
  public void underWay() {
    if (bounded() && startedLateNanos == UNMARKED) {
      startedLateNanos = Math.max(0, sinceDeadline());
    }
  }

  /**
   * How long ago the budget fell due: its deadline, or the moment its work got under way if that
   * was later ({@link #underWay()}).
   *
   * @return the nanoseconds since then; 0 if it has not come yet, or for a budget that cannot run
   *     out
   */
  public long overdueNanos() {
    return bounded() ? Math.max(0, sinceDeadline() - Math.max(0, startedLateNanos)) : 0;
  }

  private long sinceDeadline() {
    return clock.getAsLong() - startNanos - timeoutNanos;
  }

  /**
   * Runs {@code task} on {@code scheduler} when the budget runs out; does nothing for a budget that
   * cannot run out.
   */
  public void atDeadline(Scheduler scheduler, Runnable task) {
    if (bounded()) {
      scheduler.schedule(TimeUnit.NANOSECONDS.toMillis(remainingNanos()), task);
    }
  }

  /**
   * What is left at {@code nowNanos} of a budget that started at {@code startNanos} (both on the
   * engine's clock).
   *
   * @param timeoutNanos the budget, or a negative value for none
   * @return the nanoseconds left, at least 0; or a negative value for none
   */
  public static long remaining(long timeoutNanos, long startNanos, long nowNanos) {
    return timeoutNanos < 0 ? timeoutNanos : Math.max(0, timeoutNanos - (nowNanos - startNanos));
  }

  @Override
  public String toString() {
    return bounded() ? timeoutNanos + " ns from " + startNanos : "no budget";
  }
}

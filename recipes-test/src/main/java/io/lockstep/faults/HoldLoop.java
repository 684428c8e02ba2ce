package io.lockstep.faults;

import io.lockstep.recipes.locks.LockState;
import java.util.concurrent.TimeUnit;

/**
 * The work of one hold: a fenced write at once and then every step until the planned end, as long
 * as the holder is not told the hold is lost.
 *
 * <p>A step that took much longer than planned ({@link Bounds#PAUSE_THRESHOLD_MS}) means the
 * process was paused (frozen by the test) or a write was blocked. The holder then does what a
 * resumed holder does before it has heard anything: it writes once more, with its old token (the
 * write fencing must refuse). After a pause as long as a session it waits, at most {@link
 * Bounds#VERDICT_WAIT_MS}, to be told what became of the hold ({@code LOST}, or {@code HELD} again
 * after {@code AT_RISK}), so that the test process can check it is told; it reports the pause
 * ({@code paused}) and what it was told ({@code verdict}).
 */
final class HoldLoop {
  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private final EventChannel events;
  private final String thread;
  private final Pacing pacing;

  HoldLoop(EventChannel events, String thread, Pacing pacing) {
    this.events = events;
    this.thread = thread;
    this.pacing = pacing;
  }

  /** Holds for {@code plannedMs}, writing with {@code write}, told of the hold by {@code state}. */
  void hold(String holdKey, int plannedMs, Runnable write, HoldState state)
      throws InterruptedException {
    long end = System.nanoTime() + Bounds.nanos(plannedMs);
    long step = Bounds.nanos(pacing.stepMs());
    while (true) {
      long stepStart = System.nanoTime();
      write.run();
      sleepUntil(Math.min(stepStart + step, end));
      long took = System.nanoTime() - stepStart;
      if (took > step + Bounds.nanos(Bounds.PAUSE_THRESHOLD_MS)) {
        paused(holdKey, stepStart, took, write, state);
        return;
      }
      if (System.nanoTime() - end >= 0 || state.state() == LockState.LOST) {
        return;
      }
    }
  }

  private void paused(String holdKey, long since, long took, Runnable write, HoldState state)
      throws InterruptedException {
    long pausedMs = TimeUnit.NANOSECONDS.toMillis(took);
    events.send("paused", thread, holdKey, pausedMs);
    write.run();
    long waitStart = System.nanoTime();
    if (pausedMs >= Bounds.SESSION_TIMEOUT_MS) {
      long deadline = waitStart + Bounds.nanos(Bounds.VERDICT_WAIT_MS);
      while (state.state() != LockState.LOST
          && state.state() != LockState.RELEASED
          && !state.restoredSince(since)
          && System.nanoTime() - deadline < 0) {
        TimeUnit.NANOSECONDS.sleep(POLL_NANOS);
      }
    }
    events.send(
        "verdict",
        thread,
        holdKey,
        state.state(),
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - waitStart));
  }

  private static void sleepUntil(long until) throws InterruptedException {
    long left = until - System.nanoTime();
    if (left > 0) {
      TimeUnit.NANOSECONDS.sleep(left);
    }
  }
}

package io.lockstep.faults;

import java.util.concurrent.TimeUnit;

/**
 * Measures when a worker's whole JVM could not run: a daemon thread sleeps {@value #TICK_MS} ms
 * again and again, and when it wakes more than {@value #PAUSE_MS} ms late it reports an {@code
 * unscheduled} event ({@code meter}, then the nanoseconds it was late), stamped when it woke. A
 * collection's pause, a safepoint or the operating system leaving the process off both cores stops
 * this thread as it stops the library's; the budget check takes such stretches off a timed call's
 * time, as it does a freeze (so "scheduling noise" is measured, not guessed). A pause the library
 * caused in its own threads does not stop this one, and is not excused.
 */
final class PauseMeter implements Runnable {
  /** How long the meter sleeps between looks at the clock. */
  static final long TICK_MS = 10;

  /** Lateness below this is not reported: ordinary timer slack. */
  static final long PAUSE_MS = 50;

  private final EventChannel events;

  private PauseMeter(EventChannel events) {
    this.events = events;
  }

  /** Starts a meter reporting to {@code events}, in a daemon thread of its own. */
  static void start(EventChannel events) {
    Thread thread = new Thread(new PauseMeter(events), "pause-meter");
    thread.setDaemon(true);
    thread.setPriority(Thread.MAX_PRIORITY);
    thread.start();
  }

  @Override
  public void run() {
    long tick = TimeUnit.MILLISECONDS.toNanos(TICK_MS);
    long threshold = TimeUnit.MILLISECONDS.toNanos(PAUSE_MS);
    try {
      long last = System.nanoTime();
      while (true) {
        TimeUnit.NANOSECONDS.sleep(tick);
        long now = System.nanoTime();
        long late = now - last - tick;
        if (late > threshold) {
          events.send("unscheduled", "meter", late);
        }
        last = now;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

package io.lockstep.demo;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The status line of a run: elapsed time, operations, current rate, faults so far, holds lost and
 * stale writes refused. Redrawn in place every second on a terminal; elsewhere (a CI log, a pipe)
 * printed as a plain line every five seconds, more often in a short run. Its final figures are
 * shown when the run ends.
 */
final class Progress implements AutoCloseable {
  private final Console console;
  private final Metrics metrics;
  private final long start;
  private final Duration duration;
  private final ScheduledExecutorService ticker;
  private final int plainEvery; // ticks between two plain lines
  private long lastCompleted; // confined to the ticker thread, then to finish()
  private long lastNanos; // confined to the ticker thread, then to finish()
  private long lastShown; // confined to the ticker thread, then to finish()
  private int ticks; // confined to the ticker thread

  Progress(Console console, Metrics metrics, long start, Duration duration) {
    this.console = console;
    this.metrics = metrics;
    this.start = start;
    this.duration = duration;
    this.lastNanos = start;
    this.lastShown = start;
    this.plainEvery = (int) Math.max(1, Math.min(5, duration.toSeconds() / 8));
    this.ticker = Executors.newSingleThreadScheduledExecutor(Daemons.named("demo-progress"));
    var unused = ticker.scheduleAtFixedRate(this::tick, 1, 1, TimeUnit.SECONDS);
  }

  private void tick() {
    ticks++;
    if (!console.live() && ticks % plainEvery != 0) {
      return;
    }
    show();
  }

  private void show() {
    console.status(line());
    lastShown = System.nanoTime();
  }

  private String line() {
    long now = System.nanoTime();
    long completed = metrics.completed();
    double rate = (completed - lastCompleted) / ((now - lastNanos) / 1e9);
    lastCompleted = completed;
    lastNanos = now;
    return String.format(
        "  %4ds / %ds   ops %,9d   %,7.0f ops/s   faults %d   lost %d   refused %d",
        TimeUnit.NANOSECONDS.toSeconds(now - start),
        duration.toSeconds(),
        completed,
        rate,
        metrics.faults.sum(),
        metrics.losses.sum(),
        metrics.refused.sum());
  }

  /** Shows the final figures, unless shown in the last second, and moves below the line. */
  void finish() throws InterruptedException {
    ticker.shutdown();
    if (ticker.awaitTermination(5, TimeUnit.SECONDS)
        && System.nanoTime() - lastShown >= TimeUnit.SECONDS.toNanos(1)) {
      show();
    }
    console.endStatus();
  }

  @Override
  public void close() {
    ticker.shutdownNow();
  }
}

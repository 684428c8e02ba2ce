package io.lockstep.demo;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The live status line of a run: elapsed time, operations, current rate and faults so far. Redrawn
 * every second on a terminal, printed every five seconds elsewhere.
 */
final class Progress implements AutoCloseable {
  private final Console console;
  private final Metrics metrics;
  private final long start;
  private final Duration duration;
  private final ScheduledExecutorService ticker;
  private long lastCompleted; // confined to the ticker thread
  private long lastNanos; // confined to the ticker thread
  private int ticks; // confined to the ticker thread

  Progress(Console console, Metrics metrics, long start, Duration duration) {
    this.console = console;
    this.metrics = metrics;
    this.start = start;
    this.duration = duration;
    this.lastNanos = start;
    this.ticker = Executors.newSingleThreadScheduledExecutor(Daemons.named("demo-progress"));
    var unused = ticker.scheduleAtFixedRate(this::tick, 1, 1, TimeUnit.SECONDS);
  }

  private void tick() {
    ticks++;
    if (!console.live() && ticks % 5 != 0) {
      return;
    }
    console.status(line());
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

  /** Stops the line where it is. */
  void finish() throws InterruptedException {
    ticker.shutdown();
    var unused = ticker.awaitTermination(5, TimeUnit.SECONDS);
    console.endStatus();
  }

  @Override
  public void close() {
    ticker.shutdownNow();
  }
}

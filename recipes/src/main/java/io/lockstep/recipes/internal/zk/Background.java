package io.lockstep.recipes.internal.zk;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The default {@link Scheduler}: a small pool of daemon threads ({@code lockstep-N}), bounded
 * whatever the number of waiters or the size of a burst of grants. Waiting for a lock never
 * occupies one; timers are kept by the JDK's single delay thread and run here when due.
 *
 * <p>A fork-join pool in FIFO mode rather than a fixed pool: a task that blocks on one of our own
 * futures (a dependent stage that acquires another lock, say) is compensated with a spare thread
 * instead of starving the tasks that would complete that future. Spares are bounded too: at most
 * {@link #MAX_THREADS} threads in all (beyond that a blocked task waits without a spare), and an
 * idle one retires after a minute.
 */
public enum Background implements Scheduler {
  INSTANCE;

  /** Threads kept busy at most: enough for notices and completions, bounded on any machine. */
  static final int PARALLELISM =
      Math.max(4, Math.min(16, Runtime.getRuntime().availableProcessors()));

  /**
   * Threads at most, spares for blocked tasks included: a bound that a burst of blocking callbacks
   * cannot push the process past (the fork-join default allows 256 spares).
   */
  static final int MAX_THREADS = PARALLELISM + 16;

  private static final Logger log = LoggerFactory.getLogger(Background.class);
  private static final AtomicInteger threadNumber = new AtomicInteger();
  private static final ForkJoinPool pool =
      new ForkJoinPool(
          PARALLELISM,
          pool -> {
            ForkJoinWorkerThread thread =
                ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
            thread.setName("lockstep-" + threadNumber.incrementAndGet());
            thread.setDaemon(true);
            return thread;
          },
          (thread, failure) -> log.error("Lockstep background task failed", failure),
          true,
          0,
          MAX_THREADS,
          1,
          pool -> true, // at the bound, a blocked task waits without a spare (no rejection)
          60,
          TimeUnit.SECONDS);

  @Override
  public void schedule(long delayMillis, Runnable task) {
    Executor delayed = CompletableFuture.delayedExecutor(delayMillis, TimeUnit.MILLISECONDS, pool);
    delayed.execute(() -> runLogged(task));
  }

  @Override
  public void execute(Runnable task) {
    pool.execute(() -> runLogged(task));
  }

  private static void runLogged(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException | Error e) {
      log.error("Lockstep background task failed", e);
    }
  }
}

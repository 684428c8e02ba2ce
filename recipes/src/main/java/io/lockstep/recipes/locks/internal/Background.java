package io.lockstep.recipes.locks.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the engine runs work that must not run on ZooKeeper's event thread: retries after a delay,
 * and the rare blocking call (creating missing parent containers). Daemon threads, idle most of the
 * time; waiting for a lock never occupies one.
 */
final class Background {
  private static final Logger log = LoggerFactory.getLogger(Background.class);
  private static final AtomicInteger threadNumber = new AtomicInteger();
  private static final ThreadFactory threads =
      task -> {
        Thread thread = new Thread(task, "lockstep-background-" + threadNumber.incrementAndGet());
        thread.setDaemon(true);
        return thread;
      };
  private static final ExecutorService executor = Executors.newCachedThreadPool(threads);

  private Background() {}

  /** Runs {@code task} after {@code delayMillis}, logging anything it throws. */
  static void schedule(long delayMillis, Runnable task) {
    Executor delayed =
        CompletableFuture.delayedExecutor(delayMillis, TimeUnit.MILLISECONDS, executor);
    delayed.execute(() -> runLogged(task));
  }

  /** Runs {@code task} now on a background thread, logging anything it throws. */
  static void run(Runnable task) {
    executor.execute(() -> runLogged(task));
  }

  private static void runLogged(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException | Error e) {
      log.error("Lockstep background task failed", e);
    }
  }
}

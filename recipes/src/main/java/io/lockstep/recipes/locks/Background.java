package io.lockstep.recipes.locks;

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
 * The default {@link Scheduler}: a pool of daemon threads, idle most of the time, created on demand
 * and gone after a minute of idleness. Waiting for a lock never occupies one.
 */
enum Background implements Scheduler {
  INSTANCE;

  private static final Logger log = LoggerFactory.getLogger(Background.class);
  private static final AtomicInteger threadNumber = new AtomicInteger();
  private static final ThreadFactory threads =
      task -> {
        Thread thread = new Thread(task, "lockstep-" + threadNumber.incrementAndGet());
        thread.setDaemon(true);
        return thread;
      };
  private static final ExecutorService executor = Executors.newCachedThreadPool(threads);

  @Override
  public void schedule(long delayMillis, Runnable task) {
    Executor delayed =
        CompletableFuture.delayedExecutor(delayMillis, TimeUnit.MILLISECONDS, executor);
    delayed.execute(() -> runLogged(task));
  }

  @Override
  public void execute(Runnable task) {
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

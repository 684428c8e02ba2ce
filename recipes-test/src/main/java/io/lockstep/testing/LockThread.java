package io.lockstep.testing;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A thread of its own for lock calls that must come from one thread (a reentrant hold is owned by
 * the thread that acquired it). Each call returns a future of its outcome.
 */
public final class LockThread implements AutoCloseable {
  private final AtomicReference<Thread> thread = new AtomicReference<>();
  private final ExecutorService executor;

  public LockThread(String name) {
    executor =
        Executors.newSingleThreadExecutor(
            task -> {
              Thread t = new Thread(task, name);
              t.setDaemon(true);
              thread.set(t);
              return t;
            });
  }

  /** Runs {@code call} on this thread. */
  public <T> CompletableFuture<T> call(Callable<T> call) {
    CompletableFuture<T> result = new CompletableFuture<>();
    executor.execute(
        () -> {
          try {
            result.complete(call.call());
          } catch (Throwable e) {
            result.completeExceptionally(e);
          }
        });
    return result;
  }

  /** Runs {@code action} on this thread. */
  public CompletableFuture<Void> run(ThrowingRunnable action) {
    return call(
        () -> {
          action.run();
          return null;
        });
  }

  /** The underlying thread, once started. */
  public Thread thread() {
    return thread.get();
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }

  /** A runnable that may throw. */
  @FunctionalInterface
  public interface ThrowingRunnable {
    void run() throws Exception;
  }
}

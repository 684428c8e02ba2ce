package io.lockstep.recipes.internal.engine;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.concurrent.locks.LockSupport;

/**
 * A future one blocking caller waits for by parking on it ({@link #await}), as a thread waits for
 * an AQS lock, rather than through a waiter object of the future's, which {@code get} makes at
 * every wait: the grant every acquire waits for, and the delete every release waits for. Completing
 * it ({@link #complete}, {@link #completeExceptionally}, {@link #cancel}) wakes that caller. Anyone
 * else waits for it as for any future.
 *
 * @param <T> the value
 */
public final class Parking<T> extends CompletableFuture<T> {
  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<Parking, Thread> WAITER =
      AtomicReferenceFieldUpdater.newUpdater(Parking.class, Thread.class, "waiter");

  private volatile Thread waiter; // the caller parked in await, if any

  /**
   * Waits for {@code future}, as its {@code get} does: parked on it if it is a {@link Parking} and
   * nobody else parks on it, else through {@code get}.
   *
   * @param nanos at most this long, or forever if negative
   */
  public static <T> T await(CompletableFuture<T> future, long nanos)
      throws InterruptedException, ExecutionException, TimeoutException {
    if (!future.isDone() && future instanceof Parking<T> parking && parking.park(nanos)) {
      return future.get(); // done: its value or failure, at once
    }
    return nanos < 0 ? future.get() : future.get(nanos, TimeUnit.NANOSECONDS);
  }

  /** As {@link #await(CompletableFuture, long)}, for as long as it takes. */
  public static <T> T await(CompletableFuture<T> future)
      throws InterruptedException, ExecutionException {
    try {
      return await(future, -1);
    } catch (TimeoutException never) {
      throw new IllegalStateException("no budget, yet timed out", never);
    }
  }

  /**
   * Parks the calling thread until this completes, at most {@code nanos} if not negative.
   *
   * @return false if another thread parks on it already: then the caller waits through {@code get}
   */
  private boolean park(long nanos) throws InterruptedException, TimeoutException {
    Thread current = Thread.currentThread();
    if (!WAITER.compareAndSet(this, null, current)) {
      return false;
    }
    try {
      long deadline = nanos < 0 ? 0 : System.nanoTime() + nanos;
      while (!isDone()) {
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
        if (nanos < 0) {
          LockSupport.park(this);
        } else {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            throw new TimeoutException();
          }
          LockSupport.parkNanos(this, left);
        }
      }
      return true;
    } finally {
      waiter = null;
    }
  }

  @Override
  public boolean complete(T value) {
    boolean completed = super.complete(value);
    wake();
    return completed;
  }

  @Override
  public boolean completeExceptionally(Throwable failure) {
    boolean completed = super.completeExceptionally(failure);
    wake();
    return completed;
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    boolean cancelled = super.cancel(mayInterruptIfRunning);
    wake();
    return cancelled;
  }

  private void wake() {
    Thread parked = waiter;
    if (parked != null) {
      LockSupport.unpark(parked);
    }
  }
}

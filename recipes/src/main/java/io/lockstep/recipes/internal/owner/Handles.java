package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.LockFailures;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockHold;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Supplier;

/**
 * The holds of one lock object that are owned by handles ({@link LockHold}) rather than threads:
 * the blocking {@code hold()} and the asynchronous {@code acquireAsync()}. Each is its own entry in
 * the queue. An asynchronous attempt parks no thread: its future is completed by the engine's
 * callbacks, on the caller's executor, never on ZooKeeper's event thread. Cancelling the future
 * withdraws the attempt; a grant that races the cancel is released, never leaked.
 */
public final class Handles {
  private final AttemptFactory attempts;
  private final Supplier<List<Slot>> slots;
  private final Revocation revocation;
  private static final AtomicIntegerFieldUpdater<Handles> LIVE =
      AtomicIntegerFieldUpdater.newUpdater(Handles.class, "live");

  private volatile int live; // handed-out handles not closed yet (a field, not a set: per key)

  /**
   * @param slots the queues a handle's attempt enqueues in
   * @param revocation whether acquisitions are revocable, or null if they never are
   */
  public Handles(AttemptFactory attempts, Supplier<List<Slot>> slots, Revocation revocation) {
    this.attempts = attempts;
    this.slots = slots;
    this.revocation = revocation;
  }

  /**
   * Waits for a hold.
   *
   * @param timeoutNanos the budget, or a negative value to wait as long as it takes
   * @return the hold, or null if the budget ran out (the attempt was withdrawn)
   */
  public LockHold hold(long timeoutNanos) throws InterruptedException {
    LockSettings settings = attempts.settings();
    long start = settings.now();
    Attempt acquisition = start();
    return Waits.await(acquisition, Waits.remaining(timeoutNanos, start, settings.now()))
        ? register(acquisition)
        : null;
  }

  /**
   * Starts an attempt and returns at once.
   *
   * @param timeoutNanos the budget, or a negative value for none
   * @param executor completes the future, so runs its dependent stages
   */
  public CompletionStage<LockHold> acquireAsync(long timeoutNanos, Executor executor) {
    LockSettings settings = attempts.settings();
    long start = settings.now();
    Attempt acquisition = start();
    CompletableFuture<LockHold> result = new CompletableFuture<>();
    Callbacks.when(
        acquisition.grantedFuture(),
        (v, failure) -> onEnded(() -> deliver(acquisition, failure, result), executor, result));
    var unused =
        result.whenComplete(
            (hold, failure) -> {
              if (result.isCancelled()) {
                acquisition.withdraw(
                    AcquireOutcome.WITHDRAWN); // a racing grant is released by deliver
              }
            });
    if (timeoutNanos >= 0 && timeoutNanos != Long.MAX_VALUE) { // MAX_VALUE: as good as forever
      settings
          .scheduler()
          .schedule(
              TimeUnit.NANOSECONDS.toMillis(Waits.remaining(timeoutNanos, start, settings.now())),
              () -> onDeadline(acquisition, result, executor, timeoutNanos));
    }
    return result;
  }

  /** Hands out a hold for an attempt granted elsewhere: a lease of a counting semaphore. */
  LockHold adopt(Attempt granted) {
    return register(granted);
  }

  /** Whether a handle of this lock object holds the lock. */
  boolean any() {
    return live > 0;
  }

  /** A handle was closed. */
  void forget() {
    LIVE.decrementAndGet(this);
  }

  private Attempt start() {
    Runnable handler = revocation == null ? null : revocation.handler();
    return attempts.start(slots.get(), handler);
  }

  private Handle register(Attempt acquisition) {
    Handle handle = new Handle(acquisition, this);
    LIVE.incrementAndGet(this);
    return handle;
  }

  /** The attempt ended: hand the hold over, or the failure; a hold nobody takes is released. */
  private void deliver(Attempt acquisition, Throwable failure, CompletableFuture<LockHold> result) {
    if (failure == null) {
      Handle handle = register(acquisition);
      if (!result.complete(handle)) {
        handle.abandon(); // cancelled or timed out meanwhile: never leak the grant
      }
    } else if (!(Retries.unwrap(failure) instanceof CancellationException)) {
      result.completeExceptionally(Retries.unwrap(failure));
    } // withdrawn: by a cancel (already done) or the deadline (which completes the future)
  }

  /**
   * The budget ran out: {@link Waits#expire} (the first try finishes, the attempt is withdrawn and
   * cleaned up, within the grace); once the attempt is withdrawn the future fails with a {@link
   * TimeoutException}, or a {@link io.lockstep.recipes.locks.LockUnreachableException} if ZooKeeper
   * could not be reached; a grant or failure that won the race is delivered instead.
   */
  private void onDeadline(
      Attempt acquisition,
      CompletableFuture<LockHold> result,
      Executor executor,
      long timeoutNanos) {
    if (result.isDone()) {
      return;
    }
    Callbacks.when(
        Waits.expire(acquisition),
        (ending, f) -> {
          String description = attempts.settings().description();
          Exception failure;
          if (ending == Waits.Ending.TIMED_OUT) {
            failure =
                new TimeoutException("Lock " + description + " was not granted within the budget");
          } else if (ending == Waits.Ending.UNREACHABLE) {
            failure = LockFailures.unreachable(description, timeoutNanos);
          } else {
            return; // granted or failed first: deliver tells
          }
          onEnded(() -> result.completeExceptionally(failure), executor, result);
        });
  }

  /** Runs a completion on the caller's executor; if it refuses, fails the future instead. */
  private void onEnded(Runnable completion, Executor executor, CompletableFuture<LockHold> result) {
    try {
      executor.execute(completion);
    } catch (RejectedExecutionException rejected) {
      attempts
          .settings()
          .scheduler()
          .execute(
              () -> {
                result.completeExceptionally(rejected);
                completion.run(); // a grant is then released, the future being failed already
              });
    }
  }
}

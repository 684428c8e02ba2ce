package io.lockstep.recipes.internal.zk;

import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.curator.RetryPolicy;
import org.apache.zookeeper.KeeperException;

/**
 * The client's {@link RetryPolicy}, asked without sleeping: the engine schedules the next attempt
 * instead of parking a thread. Time comes from the injected clock, so tests can drive it. A retry
 * that waits out the policy's delay while the client is disconnected goes ahead as soon as the
 * client is connected again: the policy decides whether to retry, never how long after ZooKeeper is
 * back.
 */
public final class Retries {
  private static final CompletableFuture<Void> ALWAYS = CompletableFuture.completedFuture(null);

  private final Supplier<RetryPolicy> policy;
  private final LongSupplier nanoTime;
  private final Supplier<CompletableFuture<Void>> connected;

  /**
   * @param policy the current retry policy (a Curator client's can be replaced at run time)
   * @param nanoTime the clock, as {@link System#nanoTime()}
   */
  public Retries(Supplier<RetryPolicy> policy, LongSupplier nanoTime) {
    this(policy, nanoTime, () -> ALWAYS);
  }

  /**
   * @param connected completes when the client is connected (at once if it is now): a retry that
   *     waits out the policy's delay after a failure while disconnected goes ahead as soon as the
   *     client is back, however long the delay (a policy's delays grow while ZooKeeper is away)
   */
  public Retries(
      Supplier<RetryPolicy> policy,
      LongSupplier nanoTime,
      Supplier<CompletableFuture<Void>> connected) {
    this.policy = policy;
    this.nanoTime = nanoTime;
    this.connected = connected;
  }

  /**
   * Runs {@code task} once, after {@code delayMillis} or, if the client is not connected now, as
   * soon as it is connected again, whichever comes first: a wait after a failure ends when
   * ZooKeeper is back.
   */
  public void later(Scheduler scheduler, long delayMillis, Runnable task) {
    AtomicBoolean due = new AtomicBoolean();
    Runnable once =
        () -> {
          if (due.compareAndSet(false, true)) {
            task.run();
          }
        };
    CompletableFuture<Void> back = connected.get();
    if (!back.isDone()) {
      Callbacks.when(back, (v, f) -> scheduler.execute(once));
    }
    scheduler.schedule(delayMillis, once);
  }

  /** The injected clock, in nanoseconds. */
  public LongSupplier clock() {
    return nanoTime;
  }

  /** Now, on the injected clock, in nanoseconds. */
  public long now() {
    return nanoTime.getAsLong();
  }

  /**
   * Asks the retry policy whether retry number {@code retryCount} (from 0) may go ahead.
   *
   * @param startNanos when the attempt began, on {@link #now()}'s clock
   * @return the delay before the retry in milliseconds, or empty if the policy gives up
   */
  public OptionalLong delayMillis(int retryCount, long startNanos) {
    long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(now() - startNanos);
    long[] sleep = {0};
    boolean allowed =
        policy
            .get()
            .allowRetry(retryCount, elapsedMillis, (time, unit) -> sleep[0] = unit.toMillis(time));
    return allowed ? OptionalLong.of(sleep[0]) : OptionalLong.empty();
  }

  /**
   * Runs {@code attempt}, again after the policy's delay while it fails in a retryable way and
   * {@code live} holds (the client is not closed).
   */
  <T> CompletableFuture<T> retrying(
      Supplier<CompletableFuture<T>> attempt, Scheduler scheduler, BooleanSupplier live) {
    CompletableFuture<T> result = new CompletableFuture<>();
    retry(attempt, scheduler, live, result, 0, now());
    return result;
  }

  private <T> void retry(
      Supplier<CompletableFuture<T>> attempt,
      Scheduler scheduler,
      BooleanSupplier live,
      CompletableFuture<T> result,
      int retryCount,
      long startNanos) {
    Callbacks.when(
        attempt.get(),
        (value, failure) -> {
          if (failure == null) {
            result.complete(value);
            return;
          }
          OptionalLong delay =
              isRetryable(failure) && live.getAsBoolean()
                  ? delayMillis(retryCount, startNanos)
                  : OptionalLong.empty();
          if (delay.isPresent()) {
            later(
                scheduler,
                delay.getAsLong(),
                () -> retry(attempt, scheduler, live, result, retryCount + 1, startNanos));
          } else {
            result.completeExceptionally(failure);
          }
        });
  }

  /** Whether the retry policy retries this kind of failure (connection loss and the like). */
  public boolean isRetryable(Throwable failure) {
    Throwable cause = unwrap(failure);
    return cause instanceof Exception && policy.get().allowRetry((Exception) cause);
  }

  /**
   * The ZooKeeper error code of a failure, or {@code SYSTEMERROR} if it is not a KeeperException.
   */
  public static KeeperException.Code code(Throwable failure) {
    Throwable cause = unwrap(failure);
    return cause instanceof KeeperException
        ? ((KeeperException) cause).code()
        : KeeperException.Code.SYSTEMERROR;
  }

  /** The failure itself, without the CompletionException a composed future wraps it in. */
  public static Throwable unwrap(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }
}

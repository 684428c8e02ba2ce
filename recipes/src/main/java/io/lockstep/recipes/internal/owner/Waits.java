package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Acquisition;
import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.internal.zk.Scheduler;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How a caller waits for an {@link Attempt}, and the one policy for a budget that runs out, the
 * same for a caller parked on the attempt's future (never on a monitor) and for an asynchronous
 * caller whose deadline is a timer.
 *
 * <p>When the budget runs out: a first try that has not reached a verdict yet may finish, within
 * the grace (so that a zero budget means "try once"); then the attempt is withdrawn (a grant that
 * wins the race is kept); then the caller waits, within the grace again, until the withdrawn
 * attempt has left nothing behind. The grace is the client's connection timeout; what cannot be
 * done by then goes on in the background (Curator's guaranteed delete, the sweep for a lost
 * create).
 */
final class Waits {
  private Waits() {}

  /** How long after its deadline an attempt may take to reach a verdict, and to clean up. */
  static long graceNanos(Attempt attempt) {
    return attempt.settings().connectionTimeoutNanos();
  }

  /**
   * The budget ran out: the first try finishes (within the grace), the attempt is withdrawn, and
   * its cleanup is awaited (within the grace). Never blocks.
   *
   * @return completes with how the attempt ended: granted (the grant won), withdrawn, or failed
   */
  static CompletableFuture<Attempt.Outcome> expire(Attempt attempt) {
    long graceNanos = graceNanos(attempt);
    Scheduler scheduler = attempt.settings().scheduler();
    CompletableFuture<Attempt.Outcome> outcome = new CompletableFuture<>();
    Callbacks.when(
        within(attempt.decided(), graceNanos, scheduler),
        (v, f) -> {
          Attempt.Outcome ended = attempt.withdraw(AcquireOutcome.TIMED_OUT);
          if (ended == Attempt.Outcome.GRANTED) {
            outcome.complete(ended);
          } else {
            Callbacks.when(
                within(attempt.cleanedUp(), graceNanos, scheduler),
                (w, g) -> outcome.complete(ended));
          }
        });
    return outcome;
  }

  /**
   * Waits until the lock is held, the budget runs out, or the thread is interrupted.
   *
   * @param timeoutNanos the budget, or a negative value to wait as long as it takes
   * @return true if held; false if the budget ran out and the attempt was withdrawn
   * @throws InterruptedException if interrupted before the lock was granted (attempt withdrawn)
   * @throws LockException if the acquisition failed (also when it fails right at its deadline)
   */
  static boolean await(Attempt attempt, long timeoutNanos) throws InterruptedException {
    try {
      if (timeoutNanos < 0) {
        attempt.grantedFuture().get();
      } else {
        attempt.grantedFuture().get(timeoutNanos, TimeUnit.NANOSECONDS);
      }
      return true;
    } catch (TimeoutException e) {
      switch (expired(attempt)) {
        case GRANTED:
          return true;
        case FAILED:
          throw attempt.failure();
        default:
          return false;
      }
    } catch (InterruptedException e) {
      if (attempt.withdraw(AcquireOutcome.WITHDRAWN) == Attempt.Outcome.GRANTED) {
        Thread.currentThread().interrupt(); // granted before we could withdraw: keep the grant
        return true;
      }
      awaitCleanup(attempt);
      throw e;
    } catch (ExecutionException e) {
      throw failed(attempt, e);
    } catch (CancellationException e) {
      return false;
    }
  }

  /** Waits until the lock is held, ignoring interrupts; the flag is set again on return. */
  static void awaitUninterruptibly(Attempt attempt) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          attempt.grantedFuture().get();
          return;
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          throw failed(attempt, e);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** {@link #expire} in the caller's thread; an interrupt ends the graces early (flag kept). */
  private static Attempt.Outcome expired(Attempt attempt) {
    try {
      return expire(attempt).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return attempt.withdraw(AcquireOutcome.TIMED_OUT);
    } catch (ExecutionException e) {
      return attempt.withdraw(AcquireOutcome.TIMED_OUT);
    }
  }

  private static RuntimeException failed(Attempt attempt, ExecutionException e) {
    awaitCleanup(attempt);
    Throwable cause = Retries.unwrap(e.getCause());
    return cause instanceof RuntimeException
        ? (RuntimeException) cause
        : new LockException("Lock " + attempt.settings().description() + ": " + cause, cause);
  }

  private static void awaitCleanup(Attempt attempt) {
    Acquisition.awaitQuietly(attempt.cleanedUp(), graceNanos(attempt));
  }

  /** A future that completes with {@code future}, or after {@code nanos} at the latest. */
  static CompletableFuture<Void> within(
      CompletableFuture<Void> future, long nanos, Scheduler scheduler) {
    if (future.isDone()) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> bounded = new CompletableFuture<>();
    Callbacks.when(future, (v, f) -> bounded.complete(null));
    scheduler.schedule(TimeUnit.NANOSECONDS.toMillis(nanos), () -> bounded.complete(null));
    return bounded;
  }
}

package io.lockstep.recipes.locks;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The blocking bridge: a caller's thread parked on an {@link Attempt}'s future (never on a
 * monitor), and what it does when the budget runs out, the thread is interrupted or the attempt
 * fails. An attempt that gives up is gone from the server when the caller returns, or its deletion
 * was handed to the background after at most the client's connection timeout.
 */
final class BlockingAcquire {
  private BlockingAcquire() {}

  /**
   * Waits until the lock is held, the budget runs out, or the thread is interrupted. A budget that
   * runs out before the first attempt reached a verdict still lets that attempt finish, bounded by
   * the client's connection timeout, so that a zero budget means "try once".
   *
   * @param timeoutNanos the budget, or a negative value to wait as long as it takes
   * @return true if held; false if the budget ran out and the attempt was withdrawn
   * @throws InterruptedException if interrupted before the lock was granted (attempt withdrawn)
   * @throws LockException if the acquisition failed (also when it fails right at its deadline)
   */
  static boolean await(Attempt acquisition, long timeoutNanos) throws InterruptedException {
    Retries clock = acquisition.context().retries();
    long start = clock.now();
    try {
      if (timeoutNanos < 0) {
        acquisition.grantedFuture().get();
      } else {
        acquisition.grantedFuture().get(timeoutNanos, TimeUnit.NANOSECONDS);
      }
      return true;
    } catch (TimeoutException e) {
      long graceEnd = start + timeoutNanos + acquisition.connectionTimeoutNanos();
      awaitQuietly(acquisition.decided(), graceEnd, clock);
      switch (acquisition.withdraw(AcquireOutcome.TIMED_OUT)) {
        case GRANTED:
          return true;
        case FAILED:
          awaitQuietly(acquisition.cleanedUp(), graceEnd, clock);
          throw acquisition.failure();
        default:
          awaitQuietly(acquisition.cleanedUp(), graceEnd, clock);
          return false;
      }
    } catch (InterruptedException e) {
      if (acquisition.withdraw(AcquireOutcome.WITHDRAWN) == Attempt.Outcome.GRANTED) {
        Thread.currentThread().interrupt(); // granted before we could withdraw: keep the grant
        return true;
      }
      awaitCleanup(acquisition);
      throw e;
    } catch (ExecutionException e) {
      throw failed(acquisition, e);
    } catch (CancellationException e) {
      return false;
    }
  }

  /** Waits until the lock is held, ignoring interrupts; the flag is set again on return. */
  static void awaitUninterruptibly(Attempt acquisition) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          acquisition.grantedFuture().get();
          return;
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          throw failed(acquisition, e);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static RuntimeException failed(Attempt acquisition, ExecutionException e) {
    awaitCleanup(acquisition);
    Throwable cause = Retries.unwrap(e.getCause());
    return cause instanceof RuntimeException
        ? (RuntimeException) cause
        : new LockException("Lock " + acquisition.context().description() + ": " + cause, cause);
  }

  private static void awaitCleanup(Attempt acquisition) {
    Retries clock = acquisition.context().retries();
    awaitQuietly(
        acquisition.cleanedUp(), clock.now() + acquisition.connectionTimeoutNanos(), clock);
  }

  /** Waits for {@code future} until {@code deadline} at most; an interrupt stops the wait. */
  private static void awaitQuietly(CompletableFuture<Void> future, long deadline, Retries clock) {
    try {
      future.get(Math.max(0, deadline - clock.now()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException | CancellationException e) {
      // done waiting
    }
  }
}

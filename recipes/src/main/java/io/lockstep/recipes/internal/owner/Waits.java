package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.Awaits;
import io.lockstep.recipes.internal.engine.LockFailures;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.internal.zk.Scheduler;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockUnreachableException;
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
 * <p>When the budget runs out, the caller gets its answer within {@link #GRACE_NANOS}, whatever the
 * connection state: a first try that has not reached a verdict yet may finish within the grace (so
 * that a zero budget means "try once", also on a client whose first connection completes within the
 * grace; an attempt whose client lost its connection ends at once), then the attempt is withdrawn
 * (a grant that wins the race is kept), then the caller waits, until the same end of the grace and
 * while connected, for the withdrawn attempt to leave nothing behind. What is not done by then goes
 * on in the background (Curator's guaranteed delete, the sweep for a create whose outcome is
 * unknown), never in the caller's thread.
 *
 * <p>The attempt ends {@link Ending#UNREACHABLE} only when ZooKeeper really was out of reach: the
 * client is not connected when the grace ends, or it lost its connection (or ZooKeeper's client
 * declared it gone) during the attempt and the first try has no verdict. A live connection that
 * answers slowly is load, not a partition: the attempt ends {@link Ending#TIMED_OUT}, as Curator's
 * would. A silent partition therefore reads as slow until the client notices it (at its read
 * timeout, two thirds of the session timeout), and as unreachable from then on.
 */
final class Waits {
  private Waits() {}

  /** How long after its deadline a timed call may take: a first try's verdict, then a cleanup. */
  static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  /** How a budget that ran out ended. */
  enum Ending {
    /** The grant won the race: the caller holds the lock. */
    GRANTED,
    /** The lock was not granted within the budget: withdrawn. */
    TIMED_OUT,
    /** ZooKeeper could not be reached when the budget ran out: withdrawn. */
    UNREACHABLE,
    /** The attempt failed first: {@link Attempt#failure()}. */
    FAILED
  }

  /**
   * The budget ran out: the first try finishes (within the grace, while the client is connected or
   * waits for its first connection), the attempt is withdrawn, and its cleanup is awaited (until
   * the end of the grace, while connected). Never blocks.
   *
   * @return completes with how the attempt ended
   */
  static CompletableFuture<Ending> expire(Attempt attempt) {
    LockSettings settings = attempt.settings();
    Scheduler scheduler = settings.scheduler();
    long end = settings.now() + GRACE_NANOS;
    // A client that lost its connection ends at once; one that waits for its first connection, or
    // is connected, gives the first try the grace.
    CompletableFuture<Void> givenUp =
        attempt.settings().awaitingFirstConnection() ? null : attempt.settings().unreachable();
    CompletableFuture<Ending> ending = new CompletableFuture<>();
    Callbacks.when(
        within(attempt.decided(), givenUp, GRACE_NANOS, scheduler),
        (v, f) -> {
          Ending as = withdraw(attempt);
          if (as == Ending.GRANTED) {
            ending.complete(as);
          } else {
            Callbacks.when(
                within(
                    attempt.cleanedUp(),
                    attempt.settings().unreachable(),
                    end - settings.now(),
                    scheduler),
                (w, g) -> ending.complete(as));
          }
        });
    return ending;
  }

  /**
   * What is left at {@code nowNanos} of a budget that started at {@code startNanos} (both on the
   * engine's clock, {@link LockSettings#now()}): the budget is the caller's, from the moment it
   * called, so the time it took to start the attempt counts too.
   *
   * @param timeoutNanos the budget, or a negative value for none
   * @return the nanoseconds left, at least 0; or a negative value for none
   */
  static long remaining(long timeoutNanos, long startNanos, long nowNanos) {
    return timeoutNanos < 0 ? timeoutNanos : Math.max(0, timeoutNanos - (nowNanos - startNanos));
  }

  /**
   * Waits until the lock is held, the budget runs out, or the thread is interrupted.
   *
   * @param timeoutNanos the budget, or a negative value to wait as long as it takes
   * @return true if held; false if the budget ran out and the attempt was withdrawn
   * @throws InterruptedException if interrupted before the lock was granted (attempt withdrawn)
   * @throws LockUnreachableException if ZooKeeper could not be reached when the budget ran out
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
        case UNREACHABLE:
          throw LockFailures.unreachable(attempt.settings().description(), timeoutNanos);
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

  /**
   * {@link #expire} in the caller's thread, bounded by the grace even if the scheduler's timers run
   * late; an interrupt ends the grace early (flag kept).
   */
  private static Ending expired(Attempt attempt) {
    CompletableFuture<Ending> ending = expire(attempt);
    try {
      return ending.get(2 * GRACE_NANOS, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // answer now, from what is known
    }
    return withdraw(attempt);
  }

  /**
   * Withdraws an attempt whose budget ran out, telling observers whether ZooKeeper was out of
   * reach; a grant or failure that came first wins.
   */
  private static Ending withdraw(Attempt attempt) {
    boolean cutOff = cutOff(attempt);
    switch (attempt.withdraw(cutOff ? AcquireOutcome.UNREACHABLE : AcquireOutcome.TIMED_OUT)) {
      case GRANTED:
        return Ending.GRANTED;
      case FAILED:
        return Ending.FAILED;
      default:
        return cutOff ? Ending.UNREACHABLE : Ending.TIMED_OUT;
    }
  }

  /**
   * Whether an attempt whose budget ran out was cut off from ZooKeeper rather than kept waiting by
   * a holder or by a slow server: the client has no connection now, or it lost its connection since
   * the attempt began and the first try never reached a verdict.
   */
  private static boolean cutOff(Attempt attempt) {
    return attempt.settings().unreachable().isDone()
        || (attempt.disconnectedSinceStart() && !attempt.decided().isDone());
  }

  private static RuntimeException failed(Attempt attempt, ExecutionException e) {
    awaitCleanup(attempt);
    Throwable cause = Retries.unwrap(e.getCause());
    return cause instanceof RuntimeException
        ? (RuntimeException) cause
        : new LockException("Lock " + attempt.settings().description() + ": " + cause, cause);
  }

  /** Waits for the cleanup of an attempt that ended, within the grace and while connected. */
  private static void awaitCleanup(Attempt attempt) {
    Awaits.quietly(
        CompletableFuture.anyOf(attempt.cleanedUp(), attempt.settings().unreachable()),
        GRACE_NANOS);
  }

  /**
   * A future that completes with {@code future}, when {@code unreachable} (if not null) completes,
   * or after {@code nanos} at the latest.
   */
  static CompletableFuture<Void> within(
      CompletableFuture<Void> future,
      CompletableFuture<Void> unreachable,
      long nanos,
      Scheduler scheduler) {
    if (future.isDone() || (unreachable != null && unreachable.isDone()) || nanos <= 0) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> bounded = new CompletableFuture<>();
    Callbacks.when(future, (v, f) -> bounded.complete(null));
    if (unreachable != null) {
      Callbacks.when(unreachable, (v, f) -> bounded.complete(null));
    }
    scheduler.schedule(
        Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos)), () -> bounded.complete(null));
    return bounded;
  }
}

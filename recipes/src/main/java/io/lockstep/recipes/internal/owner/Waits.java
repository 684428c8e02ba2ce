package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.Awaits;
import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.internal.engine.LockFailures;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.engine.Parking;
import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.internal.zk.Scheduler;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockUnreachableException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

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
 *
 * <p>An asynchronous caller's stage follows the same rules ({@link #async}, and {@link #stage},
 * {@link #end} and {@link #offer} for the work of a semaphore or a composed lock): it completes on
 * the caller's executor (failing with the executor's refusal, if it refuses), a cancel withdraws,
 * and a grant that won the race against a cancel or the deadline is released, never leaked. Every
 * budget is a {@link Budget}, on the engine's clock.
 */
public final class Waits {
  private Waits() {}

  /** How long after its deadline a timed call may take: a first try's verdict, then a cleanup. */
  static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  /**
   * How long after its deadline a blocking caller waits for the scheduler's timers to end its
   * attempt: the grace, and 100 ms more so that a timer a little late still answers first. Past it
   * (the timers run late: a busy pool, a starved machine) the caller withdraws the attempt itself
   * and answers from what is known.
   */
  static final long LATE_TIMER_NANOS = GRACE_NANOS + TimeUnit.MILLISECONDS.toNanos(100);

  /**
   * When the grace of {@code budget}, which ran out, ends: {@link #GRACE_NANOS} after its deadline,
   * on the engine's clock; {@code nowNanos} if that is past (a timer or a caller that ran late has
   * less of it left, never more).
   */
  static long graceEnd(Budget budget, long nowNanos) {
    return nowNanos + Math.max(0, GRACE_NANOS - budget.overdueNanos());
  }

  /**
   * How much longer a blocking caller whose {@code budget} ran out waits for the timers to end its
   * work: until {@link #LATE_TIMER_NANOS} after the deadline, 0 if that is past.
   */
  static long lateTimerNanos(Budget budget) {
    return Math.max(0, LATE_TIMER_NANOS - budget.overdueNanos());
  }

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
   * the end of the grace, while connected). The grace counts from the deadline ({@link #graceEnd}),
   * so a timer that ran late leaves less of it. Never blocks.
   *
   * @param budget the caller's budget, which ran out
   * @return completes with how the attempt ended
   */
  static CompletableFuture<Ending> expire(Attempt attempt, Budget budget) {
    return expire(attempt, graceEnd(budget, attempt.settings().now()));
  }

  /** {@link #expire}, with a grace that ends at {@code end} on the engine's clock. */
  static CompletableFuture<Ending> expire(Attempt attempt, long end) {
    LockSettings settings = attempt.settings();
    Scheduler scheduler = settings.scheduler();
    // A client that lost its connection ends at once; one that waits for its first connection, or
    // is connected, gives the first try the grace.
    CompletableFuture<Void> givenUp =
        attempt.settings().awaitingFirstConnection() ? null : attempt.settings().unreachable();
    CompletableFuture<Ending> ending = new CompletableFuture<>();
    Callbacks.when(
        within(attempt.decided(), givenUp, end - settings.now(), scheduler),
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
   * Waits until the lock is held, the budget runs out, or the thread is interrupted.
   *
   * @param budget the caller's budget, started when it called
   * @return true if held; false if the budget ran out and the attempt was withdrawn
   * @throws InterruptedException if interrupted before the lock was granted (attempt withdrawn)
   * @throws LockUnreachableException if ZooKeeper could not be reached when the budget ran out
   * @throws LockException if the acquisition failed (also when it fails right at its deadline)
   */
  static boolean await(Attempt attempt, Budget budget) throws InterruptedException {
    try {
      budget.underWay();
      long left = budget.remainingNanos();
      Parking.await(attempt.grantedFuture(), left); // parked, forever if left is negative
      return true;
    } catch (TimeoutException e) {
      switch (expired(attempt, budget)) {
        case GRANTED:
          return true;
        case FAILED:
          throw attempt.failure();
        case UNREACHABLE:
          throw LockFailures.unreachable(attempt.settings().description(), budget.timeoutNanos());
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
          Parking.await(attempt.grantedFuture());
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
   * An attempt for an asynchronous caller: the stage completes on {@code executor} with the value
   * {@code grant} makes of the granted attempt (there, on the executor), or fails with the
   * attempt's failure; when the budget runs out, {@link #expire} decides, and the stage fails with
   * a {@link TimeoutException} or a {@link LockUnreachableException} once the attempt is withdrawn.
   * Cancelling the stage withdraws the attempt; a grant that wins the race against the cancel or
   * the deadline goes to {@code release}.
   */
  static <T> CompletableFuture<T> async(
      Attempt attempt,
      Budget budget,
      Executor executor,
      Function<Attempt, T> grant,
      Consumer<? super T> release) {
    Scheduler scheduler = attempt.settings().scheduler();
    budget.underWay();
    CompletableFuture<T> result = stage(() -> attempt.withdraw(AcquireOutcome.WITHDRAWN));
    Callbacks.when(
        attempt.grantedFuture(),
        (v, failure) ->
            end(result, executor, scheduler, failure, () -> grant.apply(attempt), release));
    budget.atDeadline(
        scheduler,
        () -> {
          if (!result.isDone()) {
            Callbacks.when(
                expire(attempt, budget),
                (ending, f) -> {
                  Exception failure = deadlineFailure(attempt, ending, budget);
                  if (failure != null) { // else granted or failed first: end() tells
                    onExecutor(
                        executor, scheduler, result, () -> result.completeExceptionally(failure));
                  }
                });
          }
        });
    return result;
  }

  /** The caller's stage of an asynchronous acquire; cancelling it runs {@code withdraw}. */
  static <T> CompletableFuture<T> stage(Runnable withdraw) {
    CompletableFuture<T> result = new CompletableFuture<>();
    var unused =
        result.whenComplete(
            (value, failure) -> {
              if (result.isCancelled()) {
                withdraw.run();
              }
            });
    return result;
  }

  /**
   * Ends a caller's stage on its executor: with the value {@code grant} makes there, or with the
   * failure (a cancellation ends nothing: the cancel or the deadline that withdrew the work tells
   * the caller). If the executor refuses, the stage fails with its refusal and a grant is released.
   */
  static <T> void end(
      CompletableFuture<T> result,
      Executor executor,
      Scheduler scheduler,
      Throwable failure,
      Supplier<T> grant,
      Consumer<? super T> release) {
    onExecutor(
        executor,
        scheduler,
        result,
        () -> {
          if (failure == null) {
            offer(result, grant.get(), release);
          } else if (!(Retries.unwrap(failure) instanceof CancellationException)) {
            result.completeExceptionally(Retries.unwrap(failure));
          }
        });
  }

  /**
   * Hands a granted value to a caller's stage; one the stage no longer takes (cancelled, timed out
   * or failed meanwhile) goes to {@code release}, never leaked.
   */
  public static <T> void offer(CompletableFuture<T> result, T value, Consumer<? super T> release) {
    if (!result.complete(value)) {
      release.accept(value);
    }
  }

  /** How a stage fails when its budget ran out, or null if a grant or failure came first. */
  private static Exception deadlineFailure(Attempt attempt, Ending ending, Budget budget) {
    String description = attempt.settings().description();
    if (ending == Ending.TIMED_OUT) {
      return new TimeoutException("Lock " + description + " was not granted within the budget");
    }
    return ending == Ending.UNREACHABLE
        ? LockFailures.unreachable(description, budget.timeoutNanos())
        : null;
  }

  /** Runs a completion on the caller's executor; if it refuses, fails the stage instead. */
  private static void onExecutor(
      Executor executor, Scheduler scheduler, CompletableFuture<?> result, Runnable completion) {
    try {
      executor.execute(completion);
    } catch (RejectedExecutionException rejected) {
      scheduler.execute(
          () -> {
            result.completeExceptionally(rejected);
            completion.run(); // a grant is then released, the stage being failed already
          });
    }
  }

  /**
   * {@link #expire} for a caller whose {@code budget} ran out, its grace counted from the deadline
   * (a caller that woke late has less of it left), and bounded by {@link #LATE_TIMER_NANOS} after
   * the deadline even if the scheduler's timers run late; an interrupt ends the grace early (flag
   * kept).
   */
  private static Ending expired(Attempt attempt, Budget budget) {
    CompletableFuture<Ending> ending = expire(attempt, budget);
    try {
      return ending.get(lateTimerNanos(budget), TimeUnit.NANOSECONDS);
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

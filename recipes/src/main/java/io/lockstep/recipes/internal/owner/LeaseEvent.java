package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Attempt;
import java.util.concurrent.CompletableFuture;

/**
 * What can happen to a {@link LeaseRequest}: the columns of {@link LeaseMachine}'s table. Attempts
 * are named by the ids the machine gave them in its steps, so news of an attempt that is no longer
 * in flight is recognised and ignored.
 */
sealed interface LeaseEvent {
  /** The caller asked: the first attempt starts. */
  record Begin() implements LeaseEvent {}

  /** A fast try reached its first verdict (granted, or "wait"). */
  record FastDecided(int attempt) implements LeaseEvent {}

  /** A {@link LeaseStep.Withdraw} was carried out: how the attempt ended. */
  record Withdrawn(int attempt, Attempt.Outcome outcome) implements LeaseEvent {}

  /**
   * The mutex or a waiting lease was granted ({@code failure} null) or failed; {@code lost}: the
   * hold was lost already when the grant was heard.
   */
  record Granted(int attempt, Throwable failure, boolean lost) implements LeaseEvent {}

  /** The mutex's hold was lost (its session ended). */
  record MutexLost(int attempt) implements LeaseEvent {}

  /** The budget ran out. */
  record Deadline() implements LeaseEvent {}

  /**
   * The caller cancelled; {@code cleaned} completes once nothing is left (within the grace); the
   * request fails with {@code reason}, or a {@link java.util.concurrent.CancellationException} if
   * null.
   */
  record Cancel(CompletableFuture<Void> cleaned, RuntimeException reason) implements LeaseEvent {}

  /** A {@link LeaseStep.Expire} finished: how the attempt in flight ended at the deadline. */
  record Expired(int attempt, Waits.Ending ending) implements LeaseEvent {}
}

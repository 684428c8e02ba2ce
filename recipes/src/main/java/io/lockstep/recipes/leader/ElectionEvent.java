package io.lockstep.recipes.leader;

import io.lockstep.recipes.locks.LockState;
import java.util.concurrent.CompletableFuture;

/**
 * What can happen to an {@link Election}: the columns of {@link ElectionMachine}'s table. Attempts
 * and terms are named by the ids the machine gave them, so news of one that is gone is ignored.
 */
sealed interface ElectionEvent {
  /** The participant starts: its first attempt enters the queue. */
  record Start() implements ElectionEvent {}

  /**
   * The participant leaves for good; {@code reached} completes when the steps decided before the
   * close have run (then the caller withdraws and releases what it names).
   */
  record Close(CompletableFuture<Void> reached) implements ElectionEvent {}

  /** The attempt was granted, with {@code epoch} its fencing token. */
  record Granted(int attempt, long epoch) implements ElectionEvent {}

  /** The attempt was granted, but lost before its token could be read. */
  record GrantedLost(int attempt) implements ElectionEvent {}

  /** The attempt failed; {@code clientClosed}: because its client was closed. */
  record Failed(int attempt, Throwable failure, boolean clientClosed) implements ElectionEvent {}

  /**
   * A hold of the election's queue, with fencing token {@code token}, entered {@code state}: only
   * the current term's count.
   */
  record StateChanged(long token, LockState state) implements ElectionEvent {}

  /** The leader gives its term up ({@link Leadership#close()}): its node is being deleted. */
  record Relinquish(int term) implements ElectionEvent {}

  /** A term given up has its node deleted (or the wait for it ended). */
  record Released(int term) implements ElectionEvent {}

  /** The backoff after a failed attempt ran out. */
  record RetryDue() implements ElectionEvent {}
}

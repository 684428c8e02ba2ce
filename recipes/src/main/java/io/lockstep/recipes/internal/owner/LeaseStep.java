package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.locks.AcquireOutcome;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What a {@link LeaseRequest} must do next: the answers of {@link LeaseMachine}'s transitions,
 * plain values so that the table can be tested without a server. The request carries them out in
 * order, outside its lock; none blocks.
 */
sealed interface LeaseStep {
  /** Start a lease attempt that tries once, without the mutex; report its first verdict. */
  record StartFast(int attempt) implements LeaseStep {}

  /** Start an attempt for the {@code locks} mutex; report its grant and its loss. */
  record StartMutex(int attempt) implements LeaseStep {}

  /**
   * Start a lease attempt that waits, carrying on the acquisition kept by {@link Carry} if {@code
   * carry}; report its grant.
   */
  record StartLease(int attempt, boolean carry) implements LeaseStep {}

  /**
   * Keep the acquisition of {@code attempt}, withdrawn untold, for the next lease to carry on (or
   * for the request's outcome to end).
   */
  record Carry(int attempt) implements LeaseStep {}

  /**
   * Withdraw {@code attempt} unless it was granted or failed first, telling observers {@code
   * reason} (null: nothing); report how it ended.
   */
  record Withdraw(int attempt, AcquireOutcome reason) implements LeaseStep {}

  /** Release {@code attempt}'s hold without waiting for it. */
  record Release(int attempt) implements LeaseStep {}

  /**
   * The budget ran out: end {@code attempt} as {@link Waits#expire} says, its grace ending at
   * {@code graceEnd} on the engine's clock; report how.
   */
  record Expire(int attempt, long graceEnd) implements LeaseStep {}

  /**
   * The request is granted: complete with {@code leases}, after releasing the {@code mutex} (0 for
   * none) and awaiting its delete (Curator's waiters queue for it).
   */
  record Succeed(List<Integer> leases, int mutex) implements LeaseStep {}

  /** Why a request ended without its leases. */
  sealed interface Cause {}

  /** No lease was free within the budget. */
  record Busy() implements Cause {}

  /** ZooKeeper could not be reached when the budget ran out. */
  record Unreachable() implements Cause {}

  /** {@code attempt} failed, with {@code known} if its failure is known already. */
  record Failed(int attempt, Throwable known) implements Cause {}

  /**
   * The caller cancelled: {@code cleaned} completes once nothing is left, within the grace; the
   * request fails with {@code reason}, or a {@link java.util.concurrent.CancellationException} if
   * null.
   */
  record Cancelled(CompletableFuture<Void> cleaned, RuntimeException reason) implements Cause {}

  /**
   * The request ended without its leases: give back {@code leases} and the {@code mutex} (0 for
   * none), await the cleanup of {@code inFlight} (0 for none) and theirs, until {@code graceEnd}
   * while ZooKeeper is reachable, then fail with {@code cause} (and end a carried acquisition).
   */
  record Finish(int inFlight, List<Integer> leases, int mutex, long graceEnd, Cause cause)
      implements LeaseStep {}

  /** A cancel came after the request ended: it changes nothing. */
  record CancelRefused() implements LeaseStep {}
}

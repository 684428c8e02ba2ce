package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.api.transaction.CuratorOp;

/**
 * One attempt to take a lock and the hold it becomes, as the hold tables, the blocking bridge and
 * the handles see it: an {@link Acquisition} with a node of its own, or a {@link PlaceMember}
 * taking turns on its process's place in the queue.
 */
public interface Attempt {
  /** How an attempt ended, as the caller who gave up sees it. */
  enum Outcome {
    GRANTED,
    WITHDRAWN,
    FAILED
  }

  /** The attempt's futures, listeners, observers and Flight Recorder events, in order. */
  Lifecycle lifecycle();

  /** Completes when the lock is held; fails with the attempt's failure, or when withdrawn. */
  default CompletableFuture<Void> grantedFuture() {
    return lifecycle().grantedFuture();
  }

  /** Completes when the first try reached a verdict: what a zero budget waits for. */
  default CompletableFuture<Void> decided() {
    return lifecycle().decidedFuture();
  }

  /**
   * Whether the client lost its connection (or closed) since this attempt began: with a first try
   * that has no verdict yet, what tells an attempt kept from ZooKeeper from a slow one.
   */
  default boolean disconnectedSinceStart() {
    return lifecycle().disconnectedSinceStart();
  }

  /** Completes when an attempt that ended without a grant has left nothing behind. */
  CompletableFuture<Void> cleanedUp();

  /**
   * Withdraws the attempt unless it was granted or failed first.
   *
   * @param reason what observers hear: {@link AcquireOutcome#TIMED_OUT}, {@code UNREACHABLE} or
   *     {@code WITHDRAWN}; for an {@link Acquisition}, null tells them nothing: the caller carries
   *     its {@link Observation} on, or ends it
   */
  Outcome withdraw(AcquireOutcome reason);

  /**
   * Withdraws the attempt unless it was granted or failed first, as {@link #withdraw}; the caller
   * waiting for it then gets {@code failWith} rather than a plain withdrawal (its lock object was
   * closed). Observers hear {@link AcquireOutcome#WITHDRAWN}.
   */
  default Outcome withdraw(RuntimeException failWith) {
    lifecycle().withdrawing(failWith);
    return withdraw(AcquireOutcome.WITHDRAWN);
  }

  /** Why the attempt failed, once it has. */
  default RuntimeException failure() {
    return lifecycle().failure();
  }

  /** What the lock object's attempts share. */
  LockSettings settings();

  /** Releases the hold; a lost one is cleared. */
  void release();

  /**
   * Releases the hold without waiting for what the release sends (for a grant nobody takes, on
   * whatever thread delivered it).
   *
   * @return completes once the release's requests are done
   */
  CompletableFuture<Void> releaseAsync();

  /** The fencing token, or a {@link LockOwnershipLostException} if the hold was lost. */
  long checkedFencingToken();

  /** Throws {@link LockOwnershipLostException} if the hold was lost. */
  void checkNotLost();

  /** Check operations for the caller's transaction, or a {@link LockOwnershipLostException}. */
  List<CuratorOp> ownershipChecks();

  /**
   * A stage of the caller's own that completes with the loss once the hold is LOST, or fails with a
   * {@link java.util.concurrent.CancellationException} once it is let go without a loss. Never
   * completed on ZooKeeper's event thread.
   */
  default CompletableFuture<LockOwnershipLostException> lostFuture() {
    return lifecycle().lostFuture();
  }

  /**
   * Gives the hold up as lost, for {@code reason}, unless it was released or lost first: the hold
   * becomes LOST (its listeners, observers and loss stage hear it) and its nodes are deleted in the
   * background.
   *
   * @param taken set if this call made the hold LOST (left alone if it was released or lost first),
   *     before a release that follows can clear the hold
   */
  void expire(String reason, AtomicBoolean taken);

  /** Where the attempt or hold stands. */
  Phase phase();

  /** Our node paths, one per queue. */
  List<String> nodePaths();
}

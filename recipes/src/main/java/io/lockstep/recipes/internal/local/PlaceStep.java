package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.locks.LockState;
import java.util.concurrent.CompletableFuture;

/**
 * What a {@link LocalPlace} must do next: the answers of {@link PlaceState}'s transitions, plain
 * values so that the table can be tested without a server. {@link LocalPlace} carries them out in
 * order, outside the state's lock; none blocks.
 */
sealed interface PlaceStep {
  /** Take a place in the queue: start an attempt named {@code place}. */
  record Take(int place) implements PlaceStep {}

  /**
   * Withdraw the place's attempt, which nobody needs any more (release it if it was granted at the
   * same moment); the cleanup of {@code member}, who gave up last, follows the place's.
   */
  record WithdrawPlace(int place, Contender member) implements PlaceStep {}

  /** Give the place back: release its hold (its node is deleted); then complete {@code done}. */
  record GiveBack(int place, CompletableFuture<Void> done) implements PlaceStep {}

  /**
   * Arm a timer that reports {@link PlaceEvent.LingerDue} for {@code due} after {@code delayNanos}:
   * the place lingers, kept with nobody local holding or waiting.
   */
  record LingerTimer(int place, long due, long delayNanos) implements PlaceStep {}

  /**
   * Drop the place from its client's shared objects: no open lock object uses it, and it has no
   * node, holder or waiter. A lock object opening on it first keeps it.
   */
  record Retire() implements PlaceStep {}

  /**
   * Read the queue: is our node alone in it (for shared reads: is no write node in it)? With {@code
   * watch}, the read leaves the place's child watch: a shared read place closed by a writer hears
   * when the queue changes.
   */
  record CheckQueue(int place, boolean watch) implements PlaceStep {
    /** A read that leaves no watch. */
    CheckQueue(int place) {
      this(place, false);
    }
  }

  /**
   * Write the place's node, with the data it has (a version bump): its zxid is a fresh token, and
   * checks of the old version fail from then on.
   */
  record Write(int place, int write) implements PlaceStep {}

  /** {@code member} holds: tell its listeners and the caller. */
  record Grant(Contender member, long token, boolean atRisk) implements PlaceStep {}

  /** {@code member}'s hold entered {@code state}. */
  record Notify(Contender member, LockState state, long token, String reason)
      implements PlaceStep {}

  /** {@code member} waits behind another holder: a zero budget has its verdict. */
  record Decided(Contender member) implements PlaceStep {}

  /**
   * {@code member} ended without a grant: withdrawn if {@code failure} is null, else failed. Its
   * cleanup is done now, unless {@code afterPlace} (then it follows the place's withdrawal).
   */
  record Ended(Contender member, RuntimeException failure, boolean afterPlace)
      implements PlaceStep {}

  /** {@code member} let go: announce RELEASED; complete {@code done} unless a give-back does. */
  record Released(Contender member, long token, String lostReason, CompletableFuture<Void> done)
      implements PlaceStep {
    /** The same announcement, its {@code done} left to the give-back that follows. */
    Released doneByGiveBack() {
      return new Released(member, token, lostReason, null);
    }
  }

  /** Nothing to announce; complete {@code done} (a release of a hold let go before). */
  record Complete(CompletableFuture<Void> done) implements PlaceStep {}

  /** {@code member}'s fence is ready. */
  record FenceReady(Contender member) implements PlaceStep {}

  /** {@code member} cannot have a fence: its hold was lost or let go, or the write failed. */
  record FenceRefused(Contender member, RuntimeException failure) implements PlaceStep {}
}

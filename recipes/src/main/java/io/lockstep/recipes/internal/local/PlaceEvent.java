package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.locks.LockState;
import java.util.concurrent.CompletableFuture;

/**
 * What can happen to a process's place in a queue: the columns of {@link PlaceState}'s table. The
 * place's own attempt is named by an id, so news of a place already given back is recognised and
 * ignored. Events that may hand the place on carry whether the place's attempt, as last read, is
 * lost already (its LOST notice may still be on its way): a lost place is given back, not handed
 * on.
 */
sealed interface PlaceEvent {
  /**
   * A local contender joins: it waits for its turn. {@code placeLost}: the place's attempt {@code
   * place} (the one taken last) is lost, though its notice may not have come yet, so nobody joins
   * its node in memory.
   */
  record Join(Contender member, int place, boolean placeLost) implements PlaceEvent {
    /** A join with no loss known (place 0 names no attempt). */
    Join(Contender member) {
      this(member, 0, false);
    }
  }

  /** A waiting contender gives up (timeout, interrupt, cancel). */
  record Withdraw(Contender member) implements PlaceEvent {}

  /**
   * A holding member lets go; {@code done} completes once what the release sends (the place's
   * delete, if it goes back) is done.
   */
  record Release(Contender member, int place, boolean placeLost, CompletableFuture<Void> done)
      implements PlaceEvent {}

  /** The place's attempt reached a verdict without a grant: it waits behind someone. */
  record PlaceDecided(int place) implements PlaceEvent {}

  /**
   * The place's attempt was granted: our node, its owning session, the grant's token, whether it
   * was granted at risk, found alone (with a child watch to hear of newcomers), or lost already.
   */
  record PlaceGranted(
      int place, String node, long owner, long token, boolean atRisk, boolean alone, boolean lost)
      implements PlaceEvent {}

  /** The place's attempt ended without a grant. */
  record PlaceEnded(int place, RuntimeException failure) implements PlaceEvent {}

  /** The place's hold entered {@code state} after its grant: AT_RISK, HELD again, or LOST. */
  record PlaceChanged(int place, LockState state) implements PlaceEvent {}

  /** The granting read's child watch fired: another participant may have queued. */
  record QueueChanged(int place) implements PlaceEvent {}

  /**
   * The last open lock object on the place closed: the place is kept no longer than its holds and
   * waiters need it, and may be dropped once idle.
   */
  record Unused() implements PlaceEvent {}

  /** A lock object opened on the place after its last one closed. */
  record Used() implements PlaceEvent {}

  /** The linger timer armed for {@code due} (on the place's clock) fired. */
  record LingerDue(int place, long due) implements PlaceEvent {}

  /** The read sent at the bound answered: whether our node was alone in the queue. */
  record QueueChecked(int place, boolean alone, boolean placeLost) implements PlaceEvent {}

  /**
   * The holding member asks for its fence (token and check version); {@code ready} completes when
   * it has one, or fails.
   */
  record FenceAsked(Contender member, CompletableFuture<Void> ready) implements PlaceEvent {}

  /** A write of the place's node landed: its zxid and the node's new version. */
  record FenceWritten(int place, int write, long zxid, int version, boolean placeLost)
      implements PlaceEvent {}

  /** A write of the place's node failed: the node is gone, or the outcome is unknown. */
  record FenceFailed(int place, int write, boolean nodeGone, RuntimeException failure)
      implements PlaceEvent {}

  /**
   * The holding {@code member} hands nothing on: the place goes back at its release (a downgrade's
   * read node stands on the place's node, so the next local writer must queue behind it).
   */
  record YieldAtRelease(Contender member) implements PlaceEvent {}

  /**
   * A writer of this process starts ({@code waits}) or stops waiting, {@code granted} or not:
   * readers of a shared read place do not join it while one waits, and a writer granted while the
   * place holds means the place's node is gone (the writer queued behind it).
   */
  record LocalWriter(boolean waits, boolean granted) implements PlaceEvent {}
}

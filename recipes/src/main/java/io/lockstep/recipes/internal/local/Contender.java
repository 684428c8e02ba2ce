package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.internal.engine.Lifecycle;
import io.lockstep.recipes.internal.engine.Tenure;
import io.lockstep.recipes.internal.zk.Callbacks;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A local contender, as the place sees it. Its fields are written under the place's lock only;
 * {@link #lifecycle} is the runner's, opaque to the state.
 */
public final class Contender {
  final int maxInARow;
  final long lingerNanos; // how long the place is kept after this member lets go last; 0: not
  final Lifecycle lifecycle;
  io.lockstep.recipes.internal.engine.Phase phase =
      io.lockstep.recipes.internal.engine.Phase.WAITING;
  Tenure tenure; // from the grant on
  long token; // once fenced: this hold's token; 0 before
  int version = -1; // once fenced: the node version this hold's checks require
  boolean decided; // the first try reached a verdict
  boolean yields; // the place goes back at this holder's release (a downgrade stands on it)
  String node; // a shared read place: the node this member held, once granted
  long owner; // and the session owning it
  boolean fencePending; // waits for a write of the node
  CompletableFuture<Void> fenceReady; // completed by the runner for FenceReady / FenceRefused
  final CompletableFuture<Void> cleaned = new CompletableFuture<>(); // the runner's
  final CompletableFuture<Void> releaseHeard = new CompletableFuture<>(); // the runner's

  /**
   * @param maxInARow the most local handoffs in a row while others may wait, when this member is
   *     the one to pass the place on
   * @param lifecycle what the runner announces to (null in tests without a runner)
   */
  public Contender(int maxInARow, Lifecycle lifecycle) {
    this(maxInARow, 0, lifecycle);
  }

  /**
   * @param maxInARow as for {@link #Contender(int, Lifecycle)}
   * @param lingerNanos how long the place is kept when this member lets go and nobody local waits
   *     (lock caching); 0 to give it back at once
   * @param lifecycle as for {@link #Contender(int, Lifecycle)}
   */
  public Contender(int maxInARow, long lingerNanos, Lifecycle lifecycle) {
    this.maxInARow = maxInARow;
    this.lingerNanos = lingerNanos;
    this.lifecycle = lifecycle;
  }

  /**
   * Carries out a step that tells a member (its grant, a change of its hold, its verdict, its end,
   * its release, its fence), or completes a release's future.
   *
   * @return false if the step is the place's, not a member's
   */
  static boolean hear(PlaceStep step) {
    if (step instanceof PlaceStep.Grant grant) {
      grant.member().lifecycle.granted(grant.token(), grant.atRisk());
    } else if (step instanceof PlaceStep.Notify notice) {
      String reason = notice.reason() == null ? "the place's " + notice.state() : notice.reason();
      notice.member().lifecycle.changed(notice.state(), notice.token(), reason);
    } else if (step instanceof PlaceStep.Decided decided) {
      decided.member().lifecycle.decided();
    } else if (step instanceof PlaceStep.Ended ended) {
      ended.member().lifecycle.ended(ended.failure());
      if (!ended.afterPlace()) {
        ended.member().cleaned.complete(null);
      }
    } else if (step instanceof PlaceStep.Released released) {
      Contender member = released.member();
      Callbacks.when(
          member.lifecycle.released(released.token(), released.lostReason()),
          (v, f) -> member.releaseHeard.complete(null));
      LocalPlace.complete(released.done());
    } else if (step instanceof PlaceStep.Complete complete) {
      LocalPlace.complete(complete.done());
    } else if (step instanceof PlaceStep.FenceReady ready) {
      ready.member().fenceReady.complete(null);
    } else if (step instanceof PlaceStep.FenceRefused refused) {
      refused.member().fenceReady.completeExceptionally(refused.failure());
    } else {
      return false;
    }
    return true;
  }

  /**
   * The start of {@code release}, in either table: its member's tenure ends, and the step that
   * announces it is returned, with the loss to report if the hold was lost and the release's future
   * to complete. Null if it was released before: a step that only completes the future is added.
   *
   * @throws IllegalStateException if the member was never granted
   */
  static PlaceStep.Released release(PlaceEvent.Release release, List<PlaceStep> steps) {
    Contender member = release.member();
    if (member.tenure == null) {
      throw new IllegalStateException("release of an attempt never granted: " + member.phase);
    }
    String lost = member.tenure.lostBeforeRelease();
    if (!member.tenure.release()) {
      steps.add(new PlaceStep.Complete(release.done()));
      return null;
    }
    return new PlaceStep.Released(member, member.token, lost, release.done());
  }

  /** {@code member}'s first try has its verdict (it waits behind someone), if it had none. */
  static void decide(Contender member, List<PlaceStep> steps) {
    if (!member.decided) {
      member.decided = true;
      steps.add(new PlaceStep.Decided(member));
    }
  }

  /** The place's attempt failed: every waiting member fails with it, and none waits any more. */
  static void failAll(
      Collection<Contender> waiting, RuntimeException failure, List<PlaceStep> steps) {
    for (Contender member : waiting) {
      member.phase = io.lockstep.recipes.internal.engine.Phase.FAILED;
      steps.add(new PlaceStep.Ended(member, failure, false));
    }
    waiting.clear();
  }
}

package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.internal.engine.Acquisition;
import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.locks.AcquireOutcome;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A shared read hold's node of its own: a read node tied to the place's node (created in one
 * transaction with a check of it, so only while it exists; standing at its place in the queue, so
 * granted at once), made when the hold first asks for a token it does not have or for ownership
 * checks. Its token is greater than every token handed out before it was granted, and its checks
 * commit only while it exists: until the hold lets go, whatever its sibling readers do.
 * Thread-safe.
 */
final class OwnReadNode {
  private final LocalPlace place;
  private final AtomicReference<Acquisition> attempt = new AtomicReference<>();

  OwnReadNode(LocalPlace place) {
    this.place = place;
  }

  /**
   * The node's attempt, started now if it has none yet (on {@code placeNode}); the caller waits for
   * its grant.
   */
  Acquisition start(String placeNode) {
    Acquisition started = attempt.get();
    if (started != null) {
      return started;
    }
    Acquisition fresh =
        Acquisition.start(
            place.placeSettings(), List.of(place.ownSlot(placeNode)), null, null, null);
    if (attempt.compareAndSet(null, fresh)) {
      return fresh;
    }
    var unused = giveUp(fresh); // another thread of the hold started one first
    return attempt.get();
  }

  /**
   * The hold lets go: the node is deleted (or its attempt withdrawn).
   *
   * @return completes once its delete is done; at once if there was no node
   */
  CompletableFuture<Void> release() {
    Acquisition started = attempt.getAndSet(null);
    return started == null ? CompletableFuture.completedFuture(null) : giveUp(started);
  }

  private static CompletableFuture<Void> giveUp(Acquisition started) {
    return started.withdraw(AcquireOutcome.WITHDRAWN) == Attempt.Outcome.GRANTED
        ? started.releaseAsync()
        : started.cleanedUp();
  }
}

package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.internal.engine.Acquisition;
import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.locks.AcquireOutcome;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * A shared read hold's node of its own: a read node tied to the place's node (created in one
 * transaction with a check of it, so only while it exists; standing at its place in the queue, so
 * granted at once), made when the hold first asks for a token it does not have or for ownership
 * checks. Its token is greater than every token handed out before it was granted, and its checks
 * commit only while it exists: until the hold lets go, whatever its sibling readers do.
 *
 * <p>Once the hold lets go ({@link #release}) no node is started any more: an ask racing the
 * release from another thread of the hold gets none, so no node outlives its hold. Thread-safe.
 *
 * @param <N> the node's attempt ({@code Acquisition} in the engine)
 */
final class OwnReadNode<N> {
  private static final Object RELEASED = new Object();

  private final Function<String, N> start; // starts the node's attempt on the place's node
  private final Function<N, CompletableFuture<Void>> giveUp; // deletes it, or withdraws it
  private final AtomicReference<Object> node = new AtomicReference<>(); // null, an N, or RELEASED

  OwnReadNode(Function<String, N> start, Function<N, CompletableFuture<Void>> giveUp) {
    this.start = start;
    this.giveUp = giveUp;
  }

  /** The own node of a hold of {@code place}: an attempt on a slot tied to the place's node. */
  static OwnReadNode<Acquisition> of(LocalPlace place) {
    return new OwnReadNode<>(
        placeNode ->
            Acquisition.start(
                place.placeSettings(), List.of(place.ownSlot(placeNode)), null, null, null),
        started ->
            started.withdraw(AcquireOutcome.WITHDRAWN) == Attempt.Outcome.GRANTED
                ? started.releaseAsync()
                : started.cleanedUp());
  }

  /**
   * The node's attempt, started now if it has none yet (on {@code placeNode}); the caller waits for
   * its grant.
   *
   * @return the attempt, or null if the hold let go already
   */
  @SuppressWarnings("unchecked")
  N start(String placeNode) {
    Object current = node.get();
    if (current == null) {
      N fresh = start.apply(placeNode);
      if (node.compareAndSet(null, fresh)) {
        return fresh;
      }
      var unused = giveUp.apply(fresh); // another thread started one first, or let go
      current = node.get();
    }
    return current == RELEASED ? null : (N) current;
  }

  /**
   * The hold lets go: the node is deleted (or its attempt withdrawn), and none is started after.
   *
   * @return completes once its delete is done; at once if there was no node
   */
  @SuppressWarnings("unchecked")
  CompletableFuture<Void> release() {
    Object started = node.getAndSet(RELEASED);
    return started == null || started == RELEASED
        ? CompletableFuture.completedFuture(null)
        : giveUp.apply((N) started);
  }
}

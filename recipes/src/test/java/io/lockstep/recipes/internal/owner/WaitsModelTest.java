package io.lockstep.recipes.internal.owner;

import static io.lockstep.recipes.internal.ModelCheck.check;
import static io.lockstep.recipes.internal.ModelCheck.explore;
import static io.lockstep.recipes.internal.ModelCheck.inParallel;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An asynchronous caller's stage over every interleaving Lincheck's model checker explores: the
 * grant offered to it races the caller's cancel and the deadline's failure. Whichever wins, the
 * hold is either the caller's or released, exactly once, never both and never neither; the attempt
 * is withdrawn exactly when the caller cancelled. Each of two one-line breaks made on purpose fails
 * it: an offer that drops a grant the stage refused, and a stage that withdraws on any failure.
 */
@Timeout(120)
class WaitsModelTest {
  @Test
  void aGrantRacingACancelAndTheDeadline_isTheCallersOrReleased_exactlyOnce() {
    explore(
        () -> {
          AtomicInteger withdrawn = new AtomicInteger();
          AtomicInteger released = new AtomicInteger();
          Object hold = new Object();
          CompletableFuture<Object> stage = Waits.stage(withdrawn::incrementAndGet);

          inParallel(
              () -> Waits.offer(stage, hold, given -> released.incrementAndGet()),
              () -> stage.cancel(false),
              () -> stage.completeExceptionally(new TimeoutException("the budget ran out")));

          boolean callersHold = !stage.isCompletedExceptionally() && stage.join() == hold;
          check(
              callersHold ? released.get() == 0 : released.get() == 1,
              "the caller's: " + callersHold + ", released " + released.get() + " times");
          check(
              withdrawn.get() == (stage.isCancelled() ? 1 : 0),
              "withdrawn " + withdrawn.get() + " times, cancelled: " + stage.isCancelled());
        });
  }
}

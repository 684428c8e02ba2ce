package io.lockstep.recipes.internal.engine;

import static io.lockstep.recipes.internal.ModelCheck.check;
import static io.lockstep.recipes.internal.ModelCheck.explore;
import static io.lockstep.recipes.internal.ModelCheck.inParallel;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A lock object's close racing the attempts it starts, over every interleaving Lincheck's model
 * checker explores: an attempt that started is ended by the close unless it was done first, so no
 * waiter outlives its lock object; one done before the close began is left alone. Each of three
 * breaks made on purpose fails it: a start that looks for the close before it is tracked, not
 * after; a close that ends what is live before it marks itself closed; a settled hold left tracked.
 */
@Timeout(120)
class LiveWorkModelTest {
  @Test
  void workStartedWhileTheObjectCloses_isEndedByTheClose_unlessDoneFirst() {
    explore(
        () -> {
          Map<String, Integer> ended = new ConcurrentHashMap<>();
          LiveWork<String> live =
              new LiveWork<>(
                  (work, failure) -> ended.merge(work, 1, Integer::sum),
                  () -> new IllegalStateException("closed"));
          AtomicBoolean settled = new AtomicBoolean();
          AtomicBoolean settledBeforeClose = new AtomicBoolean();

          inParallel(
              () -> live.track("waiter"),
              () -> {
                live.track("granted");
                live.accept("granted"); // granted and settled: the close has nothing to end
                settled.set(true);
              },
              () -> {
                settledBeforeClose.set(settled.get());
                live.closeAll();
              });

          check(ended.containsKey("waiter"), "a waiter outlived the close: ended " + ended);
          check(
              !settledBeforeClose.get() || !ended.containsKey("granted"),
              "a hold settled before the close was ended: " + ended);
        });
  }
}

package io.lockstep.recipes.internal.local;

import static io.lockstep.recipes.internal.ModelCheck.check;
import static io.lockstep.recipes.internal.ModelCheck.explore;
import static io.lockstep.recipes.internal.ModelCheck.inParallel;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A shared read hold's own node over every interleaving Lincheck's model checker explores, where
 * {@link OwnReadNodeTest} races threads: two threads of the hold ask for the node while a third
 * lets the hold go. Every node started is given up exactly once (none is left behind, none deleted
 * twice), an ask gets a node only if it was started, and the ask after the release gets none. Each
 * of two one-line breaks made on purpose fails it: a release that clears the node instead of
 * marking it released, and an ask that loses the race to start without giving its node up.
 */
@Timeout(120)
class OwnReadNodeModelTest {
  @Test
  void asksRacingTheRelease_leaveNoNodeBehind_andGiveNoneUpTwice() {
    explore(
        () -> {
          AtomicInteger names = new AtomicInteger();
          ConcurrentLinkedQueue<String> started = new ConcurrentLinkedQueue<>();
          ConcurrentLinkedQueue<String> givenUp = new ConcurrentLinkedQueue<>();
          OwnReadNode<String> own =
              new OwnReadNode<>(
                  placeNode -> {
                    String node = "n" + names.incrementAndGet();
                    started.add(node);
                    return node;
                  },
                  node -> {
                    givenUp.add(node);
                    return CompletableFuture.completedFuture(null);
                  });
          List<String> got = new ArrayList<>(List.of("-", "-"));

          inParallel(
              () -> got.set(0, own.start("p")),
              () -> got.set(1, own.start("p")),
              () -> own.release().join());

          List<String> gaveUp = new ArrayList<>(givenUp);
          check(gaveUp.size() == started.size(), "started " + started + ", given up " + gaveUp);
          check(
              gaveUp.containsAll(started),
              "left behind: started " + started + ", given up " + gaveUp);
          for (String node : got) {
            check(node == null || started.contains(node), "an ask got " + node + ": " + started);
          }
          check(own.start("p") == null, "a node was started after the release");
        });
  }
}

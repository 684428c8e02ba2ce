package io.lockstep.recipes.internal.engine;

import static io.lockstep.recipes.internal.ModelCheck.check;
import static io.lockstep.recipes.internal.ModelCheck.explore;
import static io.lockstep.recipes.internal.ModelCheck.inParallel;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Threads putting and removing their own keys at once (as a lock object's holding threads and its
 * attempts do), over every interleaving Lincheck's model checker explores: no entry is lost while
 * the map goes from one entry to a concurrent map, and none comes back after its removal. Each of
 * two breaks made on purpose fails both tests: a put that replaces the one entry without a
 * compare-and-set, and a remove that clears it without one.
 */
@Timeout(120)
class SlimMapModelTest {
  @Test
  void concurrentPutsAndRemoves_ofDifferentKeys_loseNothing() {
    explore(
        () -> {
          SlimMap<String, Integer> map = new SlimMap<>();
          map.put("held", 0);
          inParallel(() -> map.put("a", 1), () -> map.put("b", 2), () -> map.remove("held"));

          check(Integer.valueOf(1).equals(map.get("a")), "a was lost");
          check(Integer.valueOf(2).equals(map.get("b")), "b was lost");
          check(map.get("held") == null, "a removed entry came back");
          check(map.values().size() == 2, "values: " + map.values());
        });
  }

  @Test
  void aRemoveRacingAnotherKeysPut_removesOnlyItsOwn() {
    explore(
        () -> {
          SlimMap<String, Integer> map = new SlimMap<>();
          map.put("a", 1);
          inParallel(() -> map.remove("a"), () -> map.put("b", 2), () -> map.get("a"));

          check(map.get("a") == null, "a outlived its removal");
          check(Integer.valueOf(2).equals(map.get("b")), "b was lost");
          check(!map.isEmpty(), "b's map reads empty");
        });
  }
}

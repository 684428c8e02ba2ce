package io.lockstep.testing;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/** The count check of {@link ExclusionChecker}'s paths with a capacity (semaphores). */
final class CapacitySweep {
  private CapacitySweep() {}

  /**
   * Every moment a path of {@code capacities} had more counting segments (each of its own hold: a
   * hold's stretches never overlap) than its capacity, described with those counting then; one
   * report per excess, until the count is back within capacity.
   */
  static List<String> excesses(
      List<ExclusionChecker.Segment> segments,
      Map<String, Integer> capacities,
      Function<ExclusionChecker.Segment, String> describe) {
    Map<String, List<ExclusionChecker.Segment>> byPath = new TreeMap<>();
    for (ExclusionChecker.Segment segment : segments) {
      if (capacities.containsKey(segment.path())) {
        byPath.computeIfAbsent(segment.path(), p -> new ArrayList<>()).add(segment);
      }
    }
    List<String> problems = new ArrayList<>();
    byPath.forEach(
        (path, list) -> {
          int capacity = capacities.get(path);
          list.sort(Comparator.comparingLong(ExclusionChecker.Segment::start));
          List<ExclusionChecker.Segment> active = new ArrayList<>();
          boolean over = false;
          for (ExclusionChecker.Segment segment : list) {
            active.removeIf(earlier -> earlier.end() <= segment.start()); // touching: no overlap
            active.add(segment);
            if (active.size() <= capacity) {
              over = false;
            } else if (!over) {
              over = true;
              problems.add(
                  String.format(
                      "%d holds of %s at once (capacity %d): %s",
                      active.size(),
                      path,
                      capacity,
                      String.join(", ", active.stream().map(describe).toList())));
            }
          }
        });
    return problems;
  }
}

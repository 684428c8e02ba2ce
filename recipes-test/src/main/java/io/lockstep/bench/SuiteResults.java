package io.lockstep.bench;

import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Everything one run of the suite measured, filled section by section on the suite's thread. */
final class SuiteResults {
  /**
   * A row of the uncontended table.
   *
   * @param recipe the recipe
   * @param paths K for a multi-lock, else 1
   */
  record Row(Recipe recipe, int paths) {
    String label() {
      return recipe.label(paths);
    }
  }

  /**
   * A JMH score.
   *
   * @param perSecond operations per second
   * @param error the half-width of JMH's 99.9% confidence interval (NaN if it could not tell)
   */
  record Score(double perSecond, double error) {}

  /** The uncontended rows in page order. */
  static final List<Row> UNCONTENDED_ROWS =
      List.of(
          new Row(Recipe.MUTEX, 1),
          new Row(Recipe.NON_REENTRANT_MUTEX, 1),
          new Row(Recipe.READ, 1),
          new Row(Recipe.WRITE, 1),
          new Row(Recipe.MULTI, 1),
          new Row(Recipe.MULTI, 4),
          new Row(Recipe.MULTI, 8),
          new Row(Recipe.MULTI, 16));

  final Map<Row, Map<Library, CycleCost>> costs = new LinkedHashMap<>();
  final Map<Row, Map<Library, Score>> scores = new LinkedHashMap<>();
  final List<HandoffScenario.Result> handoffs = new ArrayList<>();
  final Map<ContentionScenario.ClientMode, List<LoadResult>> contention =
      new EnumMap<>(ContentionScenario.ClientMode.class);
  final Map<Double, List<LoadResult>> mixes = new TreeMap<>(Comparator.reverseOrder());
  final List<LoadResult> multi = new ArrayList<>();

  /**
   * The drain of {@code library}'s queue of {@code waiters} with the median drain time over the
   * repeats, or null if none ran.
   */
  HandoffScenario.Result handoff(Library library, int waiters) {
    List<HandoffScenario.Result> runs =
        handoffs.stream()
            .filter(r -> r.library() == library && r.waiters() == waiters)
            .sorted(Comparator.comparingLong(HandoffScenario.Result::drainNanos))
            .toList();
    return runs.isEmpty() ? null : runs.get(runs.size() / 2);
  }

  /** The queue lengths measured, in increasing order. */
  List<Integer> queueLengths() {
    return handoffs.stream().map(HandoffScenario.Result::waiters).distinct().sorted().toList();
  }

  /** The point of {@code library} at {@code threads} threads, or null. */
  static LoadResult find(List<LoadResult> points, Library library, int threads) {
    return points.stream()
        .filter(p -> p.library() == library && p.threads() == threads)
        .findFirst()
        .orElse(null);
  }

  /** The first point of {@code library}, or null. */
  static LoadResult find(List<LoadResult> points, Library library) {
    return points.stream().filter(p -> p.library() == library).findFirst().orElse(null);
  }

  /** "95 / 5" for a read share of 0.95. */
  static String mixLabel(double share) {
    long reads = Math.round(share * 100);
    return reads + " / " + (100 - reads);
  }

  void cost(Row row, Library library, CycleCost cost) {
    costs.computeIfAbsent(row, r -> new EnumMap<>(Library.class)).put(library, cost);
  }

  void score(Row row, Library library, Score score) {
    scores.computeIfAbsent(row, r -> new EnumMap<>(Library.class)).put(library, score);
  }
}

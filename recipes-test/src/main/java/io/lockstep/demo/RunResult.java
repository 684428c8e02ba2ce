package io.lockstep.demo;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The outcome of one run of the workload: what was counted and which invariants held.
 *
 * @param library the recipes' library, "Lockstep" or "Curator"
 * @param fenced whether the run's writes were fenced: admitted by the database's fence
 * @param recipes the recipe each operation used, as printed
 * @param elapsed from the first operation to the last worker's end
 * @param metrics the counts and latencies
 * @param meters what Micrometer's meters of the run's locks say (Lockstep's recipes only)
 * @param invariants what was checked, in report order
 */
record RunResult(
    String library,
    boolean fenced,
    Map<Operation, String> recipes,
    Duration elapsed,
    Metrics metrics,
    Optional<MeterFigures.Snapshot> meters,
    List<Invariant> invariants) {

  RunResult {
    recipes = Map.copyOf(recipes);
    invariants = List.copyOf(invariants);
  }

  /**
   * One property the demo checked.
   *
   * @param name what must hold, as printed
   * @param held whether it held
   * @param detail the figures behind the verdict
   */
  record Invariant(String name, boolean held, String detail) {}

  /** Whether every invariant held. */
  boolean held() {
    return invariants.stream().allMatch(Invariant::held);
  }

  /** Completed operations per second of elapsed time. */
  double rate(long operations) {
    double seconds = elapsed.toNanos() / 1e9;
    return seconds <= 0 ? 0 : operations / seconds;
  }
}

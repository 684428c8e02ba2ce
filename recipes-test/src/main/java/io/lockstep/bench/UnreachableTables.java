package io.lockstep.bench;

import static io.lockstep.bench.Figures.number;

import io.lockstep.testing.Library;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The block of the unreachable section ({@link UnreachableScenario}): a line saying when and how it
 * ran (the block can be updated without the rest of the page, so it says its own run), a row per
 * form with its overruns and outcomes, and whether each Lockstep row kept the promise of its budget
 * plus {@link UnreachableScenario#PROMISED_GRACE} at p99.
 */
final class UnreachableTables {
  private final SuiteResults results;

  UnreachableTables(SuiteResults results) {
    this.results = results;
  }

  /**
   * The block, or "" if the section did not run.
   *
   * @param command the command of the run, to print
   * @param cores the cores available to the JVM, to judge whether the machine was shared
   */
  String unreachable(String command, int cores) {
    UnreachableScenario.Run run = results.unreachableRun;
    if (run == null || results.unreachable.isEmpty()) {
      return "";
    }
    long promise = UnreachableScenario.PROMISED_GRACE.toMillis();
    StringBuilder block = new StringBuilder();
    block.append(
        String.format(
            Locale.ROOT,
            "Measured %s (%s): `%s`, from the repository root; %d trials per Lockstep row after %d"
                + " not counted, %s of Curator's; load average before: %s, after: %s; machine"
                + " shared: %s.%n%n",
            run.started(),
            Figures.minutes(run.took()),
            command,
            run.trials(),
            run.warmUp(),
            run.curatorTrials() == 1 ? "1 trial" : run.curatorTrials() + " trials",
            run.loadBefore(),
            run.loadAfter(),
            BenchmarkPage.shared(run.loadBefore(), cores) ? "**yes**" : "no"));
    MarkdownTable table =
        new MarkdownTable(
            "call",
            "lock",
            "ZooKeeper",
            "budget",
            "trials",
            "overrun p50 (ms)",
            "overrun p99 (ms)",
            "overrun max (ms)",
            "outcome",
            "within budget + " + promise + " ms at p99");
    table.alignRight(3, 4, 5, 6, 7);
    for (UnreachableScenario.Result result : results.unreachable) {
      table.row(
          result.call(),
          result.lock(),
          result.fault().label(),
          Figures.seconds(result.budget()),
          String.valueOf(result.trials()),
          number(result.overrunMillis(50)),
          number(result.overrunMillis(99)),
          number(result.maxMillis()),
          outcomes(result),
          verdict(result, promise));
    }
    block.append(table.render()).append('\n').append(summary(promise)).append('\n');
    return block.toString();
  }

  private static String outcomes(UnreachableScenario.Result result) {
    return result.outcomes().entrySet().stream()
        .map(
            e ->
                (e.getKey().equals("returned") ? "returned" : "`" + e.getKey() + "`")
                    + " ×"
                    + e.getValue())
        .collect(Collectors.joining(", "));
  }

  private static String verdict(UnreachableScenario.Result result, long promise) {
    if (result.library() == Library.CURATOR) {
      return "no promise";
    }
    return result.meetsPromise()
        ? "yes"
        : "**no**: " + number(result.overrunMillis(99) - promise) + " ms over";
  }

  /** The promise, and the Lockstep rows that broke it at p99. */
  private String summary(long promise) {
    List<UnreachableScenario.Result> ours =
        results.unreachable.stream().filter(r -> r.library() == Library.LOCKSTEP).toList();
    List<UnreachableScenario.Result> missed = ours.stream().filter(r -> !r.meetsPromise()).toList();
    String verdict =
        missed.isEmpty()
            ? "kept at p99 by all " + ours.size() + " of Lockstep's rows."
            : "kept at p99 by "
                + (ours.size() - missed.size())
                + " of Lockstep's "
                + ours.size()
                + " rows; broken by "
                + missed.stream()
                    .map(
                        r ->
                            r.call()
                                + " on "
                                + r.lock()
                                + " ("
                                + r.fault().label()
                                + ", p99 "
                                + number(r.overrunMillis(99) - promise)
                                + " ms over)")
                    .collect(Collectors.joining("; "))
                + ".";
    return "The promise, every timed form back within its budget + "
        + promise
        + " ms and every release or close within "
        + promise
        + " ms, whatever the connection state: "
        + verdict
        + "\n";
  }
}

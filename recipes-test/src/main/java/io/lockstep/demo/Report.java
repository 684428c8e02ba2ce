package io.lockstep.demo;

import io.lockstep.demo.RunResult.Invariant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The summary printed at the end: per operation the rate and acquire latencies, the lock notices
 * and fenced writes, and the invariants; one run alone, or Lockstep's and Curator's side by side.
 */
final class Report {
  private Report() {}

  /** The summary's lines. */
  static List<String> lines(DemoOptions options, String ensemble, List<RunResult> results) {
    List<String> lines = new ArrayList<>();
    lines.add("");
    lines.add(
        String.format(
            "Summary: %d instances x %d threads, %d accounts, %s per run, %s%s",
            options.instances(),
            options.threads(),
            options.accounts(),
            seconds(options.duration().toNanos()),
            ensemble,
            options.chaos() ? ", chaos" : ""));
    lines.add("");
    lines.addAll(operations(results).lines("  "));
    lines.add("");
    List<String> counts = counts(results).lines("  ");
    lines.addAll(results.size() > 1 ? counts : counts.subList(1, counts.size()));
    for (RunResult result : results) {
      lines.add("");
      lines.add(
          "  invariants" + (results.size() > 1 ? " of the " + result.library() + " run" : ""));
      for (Invariant invariant : result.invariants()) {
        lines.add(
            String.format(
                "    %-6s %-33s %s",
                invariant.held() ? "ok" : "FAILED", invariant.name(), invariant.detail()));
      }
      for (String problem : result.metrics().problems()) {
        lines.add("           " + problem);
      }
    }
    for (RunResult result : results) {
      if (!result.fenced()) {
        lines.add("");
        lines.add(
            "  "
                + result.library()
                + "'s writes were unfenced: its locks have no ownership checks, so a holder whose"
                + " session ended still writes.");
      }
    }
    return lines;
  }

  private static Table operations(List<RunResult> results) {
    List<String> header = new ArrayList<>(List.of("operation"));
    List<Integer> right = new ArrayList<>();
    for (RunResult result : results) {
      String prefix = results.size() > 1 ? result.library() + " " : "";
      header.add(prefix + "recipe");
      int first = header.size();
      header.addAll(List.of("ops", "ops/s", "p50 acquire", "p99 acquire", "timeouts", "errors"));
      for (int i = first; i < header.size(); i++) {
        right.add(i);
      }
    }
    Table table = new Table(header, right.stream().mapToInt(Integer::intValue).toArray());
    for (Operation operation : Operation.values()) {
      List<String> row = new ArrayList<>(List.of(operation.label()));
      for (RunResult result : results) {
        Metrics.PerOperation counts = result.metrics().of(operation);
        long completed = counts.completed.sum();
        row.add(result.recipes().get(operation));
        row.add(String.format(Locale.ROOT, "%,d", completed));
        row.add(String.format(Locale.ROOT, "%,.1f", result.rate(completed)));
        row.add(latency(counts.acquireMicros(50)));
        row.add(latency(counts.acquireMicros(99)));
        row.add(String.format(Locale.ROOT, "%,d", counts.timeouts.sum()));
        row.add(String.format(Locale.ROOT, "%,d", counts.errors.sum()));
      }
      table.row(row.toArray(String[]::new));
    }
    List<String> total = new ArrayList<>(List.of("all"));
    for (RunResult result : results) {
      long completed = result.metrics().completed();
      total.addAll(
          List.of(
              "",
              String.format(Locale.ROOT, "%,d", completed),
              String.format(Locale.ROOT, "%,.1f", result.rate(completed))));
      total.addAll(List.of("", "", "", ""));
    }
    table.row(total.toArray(String[]::new));
    return table;
  }

  private static Table counts(List<RunResult> results) {
    List<String> header = new ArrayList<>(List.of(""));
    results.forEach(result -> header.add(results.size() > 1 ? result.library() : ""));
    Table table = new Table(header);
    List<List<String>> rows = new ArrayList<>();
    rows.add(new ArrayList<>(List.of("loss notifications")));
    rows.add(new ArrayList<>(List.of("fenced writes refused")));
    rows.add(new ArrayList<>(List.of("stale writes committed")));
    rows.add(new ArrayList<>(List.of("writes committed")));
    rows.add(new ArrayList<>(List.of("faults injected")));
    for (RunResult result : results) {
      Metrics metrics = result.metrics();
      rows.get(0)
          .add(
              result.fenced()
                  ? String.format(
                      Locale.ROOT,
                      "%,d lost, %,d at risk",
                      metrics.losses.sum(),
                      metrics.atRisk.sum())
                  : "none (no such notice)");
      rows.get(1)
          .add(
              result.fenced()
                  ? String.format(
                      Locale.ROOT,
                      "%,d refused by ZooKeeper, %,d not sent (loss already known)",
                      metrics.refused.sum(),
                      metrics.skipped.sum())
                  : "none (writes unfenced)");
      rows.get(2).add(String.format(Locale.ROOT, "%,d", metrics.staleCommitted.sum()));
      rows.get(3)
          .add(
              String.format(
                  Locale.ROOT,
                  "%,d (%s)",
                  metrics.committed.sum(),
                  result.fenced() ? "fenced" : "unfenced"));
      rows.get(4).add(String.format(Locale.ROOT, "%,d", metrics.faults.sum()));
    }
    rows.forEach(row -> table.row(row.toArray(String[]::new)));
    return table;
  }

  /** A latency in microseconds, printed in ms or s. */
  static String latency(long micros) {
    if (micros >= 1_000_000) {
      return String.format(Locale.ROOT, "%.2f s", micros / 1e6);
    }
    return String.format(Locale.ROOT, "%.2f ms", micros / 1e3);
  }

  /** A duration in nanoseconds, printed in seconds. */
  static String seconds(long nanos) {
    return String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
  }
}

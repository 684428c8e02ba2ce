package io.lockstep.demo;

import io.lockstep.demo.RunResult.Invariant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * What the demo prints around its runs: the two lines that say what is about to run and what the
 * figures mean, and the summary at the end (per operation the rate and acquire latencies, the lock
 * notices and fenced writes, the Micrometer figures and the invariants; one run alone, or
 * Lockstep's and Curator's side by side).
 */
final class Report {
  private Report() {}

  /** What the workload is and what the progress figures mean, in two lines. */
  static List<String> intro(DemoOptions options, boolean canKillServers) {
    String faults;
    if (!options.faults()) {
      faults = "no faults (--no-faults)";
    } else {
      faults =
          String.format(
              Locale.ROOT,
              "at %d s %s",
              FaultPhase.begins(options.duration()).toSeconds(),
              canKillServers
                  ? "a server dies and a lock holder's session expires"
                  : "a lock holder's session expires");
    }
    String workload =
        String.format(
            Locale.ROOT,
            "Workload: %d instances x %d threads move money among %d accounts of an H2 database"
                + " under %s, %d s%s;"
                + " %s.",
            options.instances(),
            options.threads(),
            options.accounts(),
            options.compareCurator() ? "Lockstep's locks, then Curator's" : "Lockstep locks",
            options.duration().toSeconds(),
            options.compareCurator() ? " each" : "",
            faults);
    String figures =
        "Figures: ops done, ops/s; faults injected; lost = holds whose lock said LOST;"
            + " refused = stale writes the database fenced off. Then: invariants, "
            + (options.jfr() == null ? "Micrometer figures." : "Micrometer, Flight Recording.");
    return List.of(workload, figures);
  }

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
            options.faults() ? ", fault phase" : ", no faults"));
    lines.add("");
    lines.addAll(operations(results).lines("  "));
    lines.add("");
    List<String> counts = counts(results).lines("  ");
    lines.addAll(results.size() > 1 ? counts : counts.subList(1, counts.size()));
    if (options.faults()) {
      lines.addAll(faultNotes(results));
    }
    for (RunResult result : results) {
      if (result.meters().isPresent()) {
        lines.add("");
        lines.add(
            String.format(
                "  Micrometer%s: a LockstepMetrics per client, bound to one SimpleMeterRegistry",
                results.size() > 1 ? ", " + result.library() + " run" : ""));
        lines.addAll(result.meters().get().lines("  "));
      }
    }
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
                + "'s writes were unfenced: its locks have no fencing tokens for the database to"
                + " check, so a holder whose session ended still writes.");
      }
    }
    return lines;
  }

  /**
   * What a fault phase did not show this time, said plainly: a step can fail (a holder that found
   * no free lock in time, a server that would not die), and then there is nothing to count.
   */
  private static List<String> faultNotes(List<RunResult> results) {
    List<String> notes = new ArrayList<>();
    for (RunResult result : results) {
      if (!result.fenced()) {
        continue;
      }
      Metrics metrics = result.metrics();
      if (metrics.losses.sum() == 0) {
        notes.add(
            "  note: no hold was lost in this run's fault phase (its lines above say why), so"
                + " nothing needed fencing");
      } else if (metrics.refused.sum() + metrics.skipped.sum() == 0) {
        notes.add(
            "  note: holds were lost, but no holder tried to write after its loss this time, so"
                + " no write was refused");
      }
    }
    return notes;
  }

  /** Per operation and run: recipe, rate, acquire latencies, failures (and count, if alone). */
  private static Table operations(List<RunResult> results) {
    boolean alone = results.size() == 1;
    List<String> header = new ArrayList<>(List.of("operation"));
    List<Integer> right = new ArrayList<>();
    for (RunResult result : results) {
      header.add(alone ? "recipe" : result.library() + " recipe");
      int first = header.size();
      if (alone) {
        header.add("ops");
      }
      header.addAll(List.of("ops/s", "p50 acquire", "p99 acquire", "timeouts", "errors"));
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
        if (alone) {
          row.add(count(completed));
        }
        row.add(String.format(Locale.ROOT, "%,.1f", result.rate(completed)));
        row.add(latency(counts.acquireMicros(50)));
        row.add(latency(counts.acquireMicros(99)));
        row.add(count(counts.timeouts.sum()));
        row.add(count(counts.errors.sum()));
      }
      table.row(row.toArray(String[]::new));
    }
    List<String> total = new ArrayList<>(List.of("all"));
    for (RunResult result : results) {
      long completed = result.metrics().completed();
      total.add("");
      if (alone) {
        total.add(count(completed));
      }
      total.add(String.format(Locale.ROOT, "%,.1f", result.rate(completed)));
      total.addAll(List.of("", "", "", ""));
    }
    table.row(total.toArray(String[]::new));
    return table;
  }

  /** The lock notices, fenced writes and faults of each run. */
  private static Table counts(List<RunResult> results) {
    Map<String, Function<RunResult, String>> rows = new LinkedHashMap<>();
    rows.put(
        "loss notifications",
        r ->
            r.fenced()
                ? count(r.metrics().losses.sum())
                    + " lost, "
                    + count(r.metrics().atRisk.sum())
                    + " at risk"
                : "none (no such notice)");
    rows.put(
        "fenced writes refused",
        r ->
            r.fenced()
                ? count(r.metrics().refused.sum())
                    + " refused by the database, "
                    + count(r.metrics().skipped.sum())
                    + " not sent (loss already known)"
                : "none (writes unfenced)");
    rows.put("stale writes committed", r -> count(r.metrics().staleCommitted.sum()));
    rows.put(
        "writes committed",
        r -> count(r.metrics().committed.sum()) + (r.fenced() ? " (fenced)" : " (unfenced)"));
    rows.put("faults injected", r -> count(r.metrics().faults.sum()));

    List<String> header = new ArrayList<>(List.of(""));
    results.forEach(result -> header.add(results.size() > 1 ? result.library() : ""));
    Table table = new Table(header);
    rows.forEach(
        (label, cell) -> {
          List<String> row = new ArrayList<>(List.of(label));
          results.forEach(result -> row.add(cell.apply(result)));
          table.row(row.toArray(String[]::new));
        });
    return table;
  }

  private static String count(long count) {
    return String.format(Locale.ROOT, "%,d", count);
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

package io.lockstep.faults;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The outcome of one run: its shape, the faults it injected and how long each took to recover from,
 * the faults that found no target, and the checks' findings.
 *
 * @param name the run's name
 * @param seed its seed
 * @param servers 1 or 3
 * @param workers worker processes started (replacements included)
 * @param workloadMs from the first worker ready to the quiesce
 * @param recoveries each fault, with its recovery in milliseconds (see {@link LivenessChecks})
 * @param missed faults that found no target
 * @param findings violations, figures and notes
 * @param logs where the child processes' logs are
 */
record RunReport(
    String name,
    long seed,
    int servers,
    int workers,
    long workloadMs,
    Map<FaultRecord, Long> recoveries,
    List<String> missed,
    Findings findings,
    Path logs) {

  /** The faults injected. */
  List<FaultRecord> faults() {
    return List.copyOf(recoveries.keySet());
  }

  /** How many faults of each kind were injected. */
  Map<FaultKind, Long> injected() {
    Map<FaultKind, Long> counts = new EnumMap<>(FaultKind.class);
    recoveries.keySet().forEach(f -> counts.merge(f.kind(), 1L, Long::sum));
    return counts;
  }

  /** How many of each kind lasted past the session timeout. */
  Map<FaultKind, Long> pastSession() {
    Map<FaultKind, Long> counts = new EnumMap<>(FaultKind.class);
    recoveries.keySet().stream()
        .filter(FaultRecord::pastSession)
        .forEach(f -> counts.merge(f.kind(), 1L, Long::sum));
    return counts;
  }

  /** The slowest recovery of each kind, in milliseconds. */
  Map<FaultKind, Long> slowestRecovery() {
    Map<FaultKind, Long> slowest = new EnumMap<>(FaultKind.class);
    recoveries.forEach((f, ms) -> slowest.merge(f.kind(), ms, Math::max));
    return slowest;
  }

  /** Whether no check found a violation. */
  boolean clean() {
    return findings.violations().isEmpty();
  }

  /** One line per figure, then the violations (at most 40) and the notes (at most 20). */
  List<String> summary() {
    List<String> lines = new ArrayList<>();
    lines.add(
        "process faults "
            + name
            + ": seed="
            + seed
            + " servers="
            + servers
            + " workers="
            + workers
            + " workload="
            + workloadMs / 1000
            + "s logs="
            + logs);
    StringBuilder faults = new StringBuilder("faults:");
    Map<FaultKind, Long> past = pastSession();
    Map<FaultKind, Long> slowest = slowestRecovery();
    injected()
        .forEach(
            (kind, count) ->
                faults
                    .append(' ')
                    .append(kind.name().toLowerCase().replace('_', '-'))
                    .append('=')
                    .append(count)
                    .append(" (past session ")
                    .append(past.getOrDefault(kind, 0L))
                    .append(", slowest recovery ")
                    .append(slowest.get(kind))
                    .append(" ms)"));
    lines.add(faults.toString());
    if (!missed.isEmpty()) {
      lines.add("faults without a target: " + missed);
    }
    StringBuilder figures = new StringBuilder("figures:");
    findings
        .figures()
        .forEach(
            (name, value) ->
                figures.append(' ').append(name).append('=').append(value).append(';'));
    lines.add(figures.toString());
    lines.add("violations: " + findings.violations().size());
    findings.violations().stream().limit(40).forEach(v -> lines.add("  violation " + v));
    findings.notes().stream().limit(20).forEach(n -> lines.add("  note " + n));
    return lines;
  }
}

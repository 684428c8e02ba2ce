package io.lockstep.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The generated part of {@code docs/fault-suite.md}, written by the long run: when and how it ran,
 * the faults injected per kind with the slowest recovery of each, each run's figures (holds,
 * refusals, loss notices), and the violations. The rest of the page is written by hand; only the
 * text between the markers is replaced ({@link #fill}).
 */
final class FaultSuitePage {
  static final String BEGIN =
      "<!-- BEGIN GENERATED fault-run: written by ProcessFaultLongRunTest, do not edit -->";
  static final String END = "<!-- END GENERATED fault-run -->";

  /** The figures each run's table shows, in order, with their labels on the page. */
  private static final Map<String, String> FIGURES = new LinkedHashMap<>();

  static {
    FIGURES.put("holds", "holds (leases and leaderships included)");
    FIGURES.put("attempts acquired", "acquires granted");
    FIGURES.put("attempts timed out", "acquires timed out");
    FIGURES.put("attempts unreachable", "acquires told ZooKeeper is unreachable");
    FIGURES.put("attempts failed", "acquires failed (retry policy gave up)");
    FIGURES.put("store writes accepted", "fenced store: writes accepted");
    FIGURES.put("store writes refused", "fenced store: stale writes refused");
    FIGURES.put(
        "zookeeper writes committed", "ZooKeeper: writes committed behind ownership checks");
    FIGURES.put("zookeeper writes refused", "ZooKeeper: writes refused by an ownership check");
    FIGURES.put("zookeeper writes skipped", "ZooKeeper: writes not sent (hold known lost)");
    FIGURES.put("zookeeper writes unsure", "ZooKeeper: writes whose answer was lost");
    FIGURES.put("overlaps excused (holder told, or its session ended)", "overlaps excused");
    FIGURES.put("holds frozen past their session", "holds frozen past their session (told LOST)");
    FIGURES.put("holds whose client expired", "holds whose client expired the session (told LOST)");
    FIGURES.put(
        "holds released before their client's expiry was heard",
        "holds whose client expired the session, released before told");
    FIGURES.put("queued waiters frozen", "waiters frozen with their node queued");
    FIGURES.put("lingering places frozen", "lingering processes frozen with their node");
    FIGURES.put("slowest LOST after a thaw or expiry (ms)", "slowest LOST after a thaw (ms)");
    FIGURES.put("longest wait outside faults (ms)", "longest wait for a lock outside faults (ms)");
    FIGURES.put("longest wait after a fault (ms)", "longest wait for a lock after a fault (ms)");
    FIGURES.put(
        "longest node life after its owner let go, or the servers came back (ms)",
        "longest node life after its owner let go (ms)");
    FIGURES.put("slowest release (ms)", "slowest release (ms)");
    FIGURES.put("unreachable while connected", "told unreachable on a live connection");
  }

  private FaultSuitePage() {}

  /** Replaces the generated block of {@code page} with the figures of {@code reports}. */
  static void write(Path page, List<RunReport> reports, String command, String date)
      throws IOException {
    String text = Files.readString(page);
    Files.writeString(page, fill(text, block(reports, command, date)));
  }

  /**
   * The page with the text between its markers replaced by {@code block}.
   *
   * @throws IllegalStateException if the page lacks the markers
   */
  static String fill(String page, String block) {
    int begin = page.indexOf(BEGIN);
    int end = page.indexOf(END);
    if (begin < 0 || end < begin) {
      throw new IllegalStateException("the page has no generated block between " + BEGIN);
    }
    return page.substring(0, begin + BEGIN.length()) + "\n" + block + page.substring(end);
  }

  /** The generated block: the run, the faults, the figures, the violations. */
  static String block(List<RunReport> reports, String command, String date) {
    StringBuilder md = new StringBuilder();
    long minutes = Math.round(reports.stream().mapToLong(RunReport::workloadMs).sum() / 60_000.0);
    md.append("Run of ")
        .append(date)
        .append(", about ")
        .append(minutes)
        .append(" minutes of workload on ")
        .append(Runtime.getRuntime().availableProcessors())
        .append(" cores (")
        .append(System.getProperty("os.name"))
        .append(", Java ")
        .append(System.getProperty("java.version"))
        .append("): `")
        .append(command)
        .append("`. Seeds: ");
    md.append(String.join(", ", reports.stream().map(r -> r.name() + " " + r.seed()).toList()));
    md.append(".\n\n");
    md.append("| fault | injected | past the session | slowest recovery (ms) |\n");
    md.append("|---|---:|---:|---:|\n");
    Map<FaultKind, Long> injected = new EnumMap<>(FaultKind.class);
    Map<FaultKind, Long> past = new EnumMap<>(FaultKind.class);
    Map<FaultKind, Long> slowest = new EnumMap<>(FaultKind.class);
    for (RunReport report : reports) {
      report.injected().forEach((k, v) -> injected.merge(k, v, Long::sum));
      report.pastSession().forEach((k, v) -> past.merge(k, v, Long::sum));
      report.slowestRecovery().forEach((k, v) -> slowest.merge(k, v, Math::max));
    }
    for (FaultKind kind : FaultKind.values()) {
      md.append("| ")
          .append(kind.label())
          .append(" | ")
          .append(injected.getOrDefault(kind, 0L))
          .append(" | ")
          .append(past.getOrDefault(kind, 0L))
          .append(" | ")
          .append(slowest.containsKey(kind) ? String.format("%,d", slowest.get(kind)) : "-")
          .append(" |\n");
    }
    md.append("\n| figure |");
    reports.forEach(r -> md.append(' ').append(r.name()).append(" |"));
    md.append("\n|---|");
    reports.forEach(r -> md.append("---:|"));
    md.append('\n');
    md.append("| worker processes |");
    reports.forEach(r -> md.append(' ').append(r.workers()).append(" |"));
    md.append('\n');
    FIGURES.forEach(
        (key, label) -> {
          md.append("| ").append(label).append(" |");
          reports.forEach(
              r ->
                  md.append(' ')
                      .append(String.format("%,d", r.findings().figure(key)))
                      .append(" |"));
          md.append('\n');
        });
    int violations = reports.stream().mapToInt(r -> r.findings().violations().size()).sum();
    md.append("\nViolations: ").append(violations).append(".\n");
    list(md, reports, r -> r.findings().violations().stream().map(Object::toString).toList(), 20);
    List<String> missed = reports.stream().flatMap(r -> r.missed().stream()).toList();
    if (!missed.isEmpty()) {
      md.append("\nFaults that found no target: ").append(missed.size()).append(".\n");
    }
    long notes = reports.stream().mapToLong(r -> r.findings().notes().size()).sum();
    if (notes > 0) {
      md.append("\nNotes (suspicious, not violations): ").append(notes).append(".\n");
      list(md, reports, r -> r.findings().notes(), 10);
    }
    return md.toString();
  }

  /** A bulleted list of at most {@code limit} lines of each report, set off by blank lines. */
  private static void list(
      StringBuilder md,
      List<RunReport> reports,
      java.util.function.Function<RunReport, List<String>> lines,
      int limit) {
    StringBuilder items = new StringBuilder();
    for (RunReport report : reports) {
      lines.apply(report).stream()
          .limit(limit)
          .forEach(
              line ->
                  items.append("- ").append(report.name()).append(": ").append(line).append('\n'));
    }
    if (items.length() > 0) {
      md.append('\n').append(items);
    }
  }
}

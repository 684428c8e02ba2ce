package io.lockstep.bench;

import static io.lockstep.bench.Figures.decimals;
import static io.lockstep.bench.Figures.mark;
import static io.lockstep.bench.Figures.number;

import io.lockstep.bench.ContentionScenario.ClientMode;
import io.lockstep.testing.Library;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The tables of the benchmark page's sections, one block each: Curator's figure, ours and the ratio
 * on every row, with the section's chart. Each method returns "" when the run did not measure the
 * section.
 */
final class SectionTables {
  private final SuiteSettings settings;
  private final SuiteResults results;

  SectionTables(SuiteSettings settings, SuiteResults results) {
    this.settings = settings;
    this.results = results;
  }

  /**
   * The uncontended block: a line saying when and how its rows ran (the block can be updated
   * without the rest of the page), then the table of the rows measured, a line naming those not
   * measured, and the chart.
   *
   * @param command the command of the run, to print
   * @param cores the cores available to the JVM, to judge whether the machine was shared
   */
  String uncontended(String command, int cores) {
    MarkdownTable table =
        new MarkdownTable(
            "recipe",
            "Curator",
            "Lockstep",
            "Curator cycles/s",
            "Lockstep cycles/s",
            "Lockstep ÷ Curator",
            "requests per cycle (writes), Curator / Lockstep",
            "response bytes per cycle, Curator / Lockstep",
            "bytes allocated per cycle, Curator / Lockstep");
    table.alignRight(3, 4, 5, 6, 7, 8);
    List<String> notMeasured = new ArrayList<>();
    for (SuiteResults.Row row : SuiteResults.UNCONTENDED_ROWS) {
      Map<Library, SuiteResults.Score> scores = results.scores.get(row);
      Map<Library, CycleCost> costs = results.costs.get(row);
      if (scores == null && costs == null) {
        notMeasured.add(row.label());
        continue;
      }
      String[] jmh = {"", "", "", ""}; // cycles/s of each, their ratio, bytes allocated
      if (scores != null && scores.size() == 2) {
        SuiteResults.Score curator = scores.get(Library.CURATOR);
        SuiteResults.Score ours = scores.get(Library.LOCKSTEP);
        jmh =
            new String[] {
              Figures.rate(curator),
              Figures.rate(ours),
              mark(ours.perSecond() / curator.perSecond()),
              Double.isNaN(curator.allocatedBytes()) && Double.isNaN(ours.allocatedBytes())
                  ? ""
                  : number(curator.allocatedBytes()) + " / " + number(ours.allocatedBytes())
            };
      }
      String requests = "";
      String bytes = "";
      if (costs != null && costs.size() == 2) {
        CycleCost curator = costs.get(Library.CURATOR);
        CycleCost ours = costs.get(Library.LOCKSTEP);
        requests =
            String.format(
                "%s (%s) / %s (%s)",
                number(curator.requestsPerCycle()),
                number(curator.writesPerCycle()),
                number(ours.requestsPerCycle()),
                number(ours.writesPerCycle()));
        bytes =
            number(curator.responseBytesPerCycle()) + " / " + number(ours.responseBytesPerCycle());
      }
      table.row(
          row.label(),
          "`" + row.recipe().className(Library.CURATOR) + "`",
          "`" + row.recipe().className(Library.LOCKSTEP) + "`",
          jmh[0],
          jmh[1],
          jmh[2],
          requests,
          bytes,
          jmh[3]);
    }
    if (table.isEmpty()) {
      return "";
    }
    return uncontendedRun(command, cores)
        + table.render()
        + (notMeasured.isEmpty()
            ? ""
            : "\n*Not measured in this run: " + String.join("; ", notMeasured) + ".*\n")
        + "\n![Uncontended cycles per second](bench-uncontended.png)\n";
  }

  /** When and how the uncontended rows ran, or "" if the results do not say. */
  private String uncontendedRun(String command, int cores) {
    SuiteResults.UncontendedRun run = results.uncontendedRun;
    if (run == null) {
      return "";
    }
    return BenchmarkPage.measuredLine(
            run.started(), run.took(), command, run.loadBefore(), run.loadAfter(), cores)
        + String.format(
            Locale.ROOT,
            "%s mode: JMH with %s, and its GC profiler; requests counted over %d cycles a row.%n%n",
            Figures.capitalised(settings.mode()),
            BenchmarkPage.jmhIterations(settings),
            settings.countedCycles());
  }

  String handoff() {
    MarkdownTable table =
        new MarkdownTable(
            "N",
            "Curator drain (ms)",
            "Lockstep drain (ms)",
            "Curator ÷ Lockstep",
            "per handoff (µs), Curator / Lockstep",
            "gap p99 (ms), Curator / Lockstep",
            "requests per handoff, Curator / Lockstep",
            "response bytes per handoff, Curator / Lockstep",
            "watches fired per delete (max), Curator / Lockstep");
    table.alignRight(0, 1, 2, 3, 4, 5, 6, 7, 8);
    for (int n : results.queueLengths()) {
      HandoffScenario.Result curator = results.handoff(Library.CURATOR, n);
      HandoffScenario.Result ours = results.handoff(Library.LOCKSTEP, n);
      if (curator == null || ours == null) {
        continue;
      }
      table.row(
          String.valueOf(n),
          number(curator.drainMillis()),
          number(ours.drainMillis()),
          mark(curator.drainMillis() / ours.drainMillis()),
          number(curator.handoffMicros()) + " / " + number(ours.handoffMicros()),
          number(curator.gaps().getValueAtPercentile(99) / 1e6)
              + " / "
              + number(ours.gaps().getValueAtPercentile(99) / 1e6),
          decimals(curator.requestsPerHandoff()) + " / " + decimals(ours.requestsPerHandoff()),
          number(curator.responseBytesPerHandoff())
              + " / "
              + number(ours.responseBytesPerHandoff()),
          String.format(
              Locale.ROOT,
              "%s (%d) / %s (%d)",
              decimals(curator.watchesPerDelete()),
              curator.maxDeletedWatches(),
              decimals(ours.watchesPerDelete()),
              ours.maxDeletedWatches()));
    }
    if (table.isEmpty()) {
      return "";
    }
    return table.render() + "\n![Drain time against queue length](bench-handoff.png)\n";
  }

  String contention() {
    StringBuilder block = new StringBuilder();
    for (ClientMode mode : ClientMode.values()) {
      if (!results.contention.containsKey(mode)) {
        continue;
      }
      MarkdownTable table = contentionTable(mode);
      for (int threads : settings.threadCounts()) {
        contentionRow(table, mode, threads);
      }
      block.append("**").append(Figures.capitalised(mode.label())).append("**\n\n");
      block.append(table.render()).append('\n');
      List<Contender> left = new ArrayList<>(List.of(Contender.values()));
      left.removeAll(Contender.in(mode));
      if (!left.isEmpty()) {
        block
            .append("*Not run with ")
            .append(mode.label())
            .append(": ")
            .append(left.stream().map(Contender::label).collect(Collectors.joining(", ")))
            .append(" (each thread is a process of its own, so it would be plain Lockstep).*\n\n");
      }
    }
    if (block.length() == 0) {
      return "";
    }
    return block
        + "![Acquisitions per second and acquire latency against threads](bench-contention.png)\n";
  }

  /**
   * A column of rates and of latencies per {@link Contender} run in {@code mode}, a ratio per
   * challenger.
   */
  private static MarkdownTable contentionTable(ClientMode mode) {
    List<String> header = new ArrayList<>(List.of("T"));
    for (Contender contender : Contender.in(mode)) {
      header.add(contender.label() + " acquisitions/s");
    }
    for (Contender challenger : Contender.challengers(mode)) {
      header.add(challenger.label() + " ÷ Curator");
    }
    for (Contender contender : Contender.in(mode)) {
      header.add(contender.label() + " p50 / p99 / p999 (ms)");
    }
    header.add(
        "requests per acquisition, "
            + Contender.in(mode).stream().map(Contender::label).collect(Collectors.joining(" / ")));
    MarkdownTable table = new MarkdownTable(header.toArray(String[]::new));
    table.alignRight(IntStream.range(1, header.size()).toArray());
    return table;
  }

  private void contentionRow(MarkdownTable table, ClientMode mode, int threads) {
    LoadResult curator = results.contention(mode, Contender.CURATOR, threads);
    List<LoadResult> points = new ArrayList<>();
    for (Contender contender : Contender.in(mode)) {
      points.add(results.contention(mode, contender, threads));
    }
    if (curator == null || points.stream().skip(1).allMatch(p -> p == null)) {
      return;
    }
    List<String> cells = new ArrayList<>(List.of(String.valueOf(threads)));
    points.forEach(p -> cells.add(p == null ? "–" : number(p.perSecond())));
    points.stream()
        .skip(1)
        .forEach(p -> cells.add(p == null ? "–" : mark(p.perSecond() / curator.perSecond())));
    points.forEach(p -> cells.add(p == null ? "–" : Figures.percentiles(p.latency())));
    cells.add(
        points.stream()
            .map(p -> p == null ? "–" : decimals(p.requestsPerAcquisition()))
            .collect(Collectors.joining(" / ")));
    table.row(cells.toArray(String[]::new));
  }

  String mixes() {
    MarkdownTable table = loadTable("reads / writes", true);
    results.mixes.forEach(
        (share, points) ->
            loadRow(
                table,
                SuiteResults.mixLabel(share),
                SuiteResults.find(points, Library.CURATOR, settings.mixThreads()),
                SuiteResults.find(points, Library.LOCKSTEP, settings.mixThreads()),
                true));
    return table.isEmpty() ? "" : table.render();
  }

  String multiContention() {
    MarkdownTable table = loadTable("T, K of P", false);
    loadRow(
        table,
        settings.multiThreads() + ", " + settings.multiK() + " of " + settings.multiPaths(),
        SuiteResults.find(results.multi, Library.CURATOR, settings.multiThreads()),
        SuiteResults.find(results.multi, Library.LOCKSTEP, settings.multiThreads()),
        false);
    return table.isEmpty() ? "" : table.render();
  }

  private static MarkdownTable loadTable(String first, boolean readsAndWrites) {
    List<String> header =
        new ArrayList<>(
            List.of(
                first,
                "Curator acquisitions/s",
                "Lockstep acquisitions/s",
                "Lockstep ÷ Curator",
                "Curator p50 / p99 / p999 (ms)",
                "Lockstep p50 / p99 / p999 (ms)"));
    if (readsAndWrites) {
      header.add("p99 read / write (ms), Curator / Lockstep");
    }
    header.add("requests per acquisition, Curator / Lockstep");
    MarkdownTable table = new MarkdownTable(header.toArray(String[]::new));
    table.alignRight(1, 2, 3, 4, 5, 6, 7);
    return table;
  }

  private static void loadRow(
      MarkdownTable table,
      String label,
      LoadResult curator,
      LoadResult ours,
      boolean readsAndWrites) {
    if (curator == null || ours == null) {
      return;
    }
    List<String> cells =
        new ArrayList<>(
            List.of(
                label,
                number(curator.perSecond()),
                number(ours.perSecond()),
                mark(ours.perSecond() / curator.perSecond()),
                Figures.percentiles(curator.latency()),
                Figures.percentiles(ours.latency())));
    if (readsAndWrites) {
      cells.add(
          partMillis(curator, 0)
              + " / "
              + partMillis(curator, 1)
              + " — "
              + partMillis(ours, 0)
              + " / "
              + partMillis(ours, 1));
    }
    cells.add(
        decimals(curator.requestsPerAcquisition())
            + " / "
            + decimals(ours.requestsPerAcquisition()));
    table.row(cells.toArray(String[]::new));
  }

  private static String partMillis(LoadResult result, int part) {
    if (result.parts().size() <= part || result.parts().get(part).getTotalCount() == 0) {
      return "–";
    }
    return number(LoadResult.millis(result.parts().get(part), 99));
  }
}

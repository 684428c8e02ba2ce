package io.lockstep.bench;

import static io.lockstep.bench.Figures.decimals;
import static io.lockstep.bench.Figures.number;

import io.lockstep.bench.ReadShareScenario.Mix;
import io.lockstep.bench.ReadShareScenario.Point;
import io.lockstep.bench.ReadShareScenario.Series;
import java.util.List;
import java.util.Locale;

/**
 * The block of the read sharing section ({@link ReadShareScenario}): a line saying when and how it
 * ran (the block can be updated without the rest of the page), the workload, one row per mix and
 * series with the ratio to Curator's, and the goals at 95 / 5 met or missed. Returns ""
 * when the run did not measure it.
 */
final class ReadShareTables {
  /** The goals at 95 / 5: acquisitions/s against Curator's, requests per read. */
  static final double GOAL_RATIO = 5.0;

  static final double GOAL_REQUESTS_PER_READ = 0.5;

  private final SuiteResults results;

  ReadShareTables(SuiteResults results) {
    this.results = results;
  }

  /**
   * The block, or "" if the section did not run.
   *
   * @param command the command of the run, to print
   * @param cores the cores available to the JVM, to judge whether the machine was shared
   */
  String block(String command, int cores) {
    ReadShareScenario.Run run = results.readShareRun;
    if (run == null) {
      return "";
    }
    return BenchmarkPage.measuredLine(
            run.started(), run.took(), command, run.loadBefore(), run.loadAfter(), cores)
        + String.format(
            Locale.ROOT,
            "One client, %d reader threads and 1 writer thread on one path, a lock object each;"
                + " reads in batches of 19 (95 / 5) or 4 (80 / 20), each followed by one write;"
                + " %s of warm-up, %s measured per row; requests counted on the server, the"
                + " writer's included.%n%n",
            ReadShareScenario.READERS,
            Figures.seconds(run.warmUp()),
            Figures.seconds(run.measured()))
        + table(run)
        + goals(run);
  }

  private static String table(ReadShareScenario.Run run) {
    MarkdownTable table =
        new MarkdownTable(
            "reads / writes",
            "series",
            "reads/s",
            "writes/s",
            "acquisitions/s",
            "÷ Curator",
            "reads per write",
            "requests per acquisition",
            "requests per read",
            "read p50 / p99 (ms)",
            "write p50 / p99 (ms)");
    table.alignRight(0, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    for (Point point : run.points()) {
      Point curator = run.point(point.mix(), Series.CURATOR);
      table.row(
          point.mix().label(),
          point.series().label(),
          number(point.readsPerSecond()),
          number(point.writesPerSecond()),
          number(point.acquisitionsPerSecond()),
          curator == null ? "–" : Figures.mark(ratio(point, curator)),
          decimals(point.readsPerWrite()),
          String.format(Locale.ROOT, "%.3f", point.requestsPerAcquisition()),
          String.format(Locale.ROOT, "%.3f", point.requestsPerRead()),
          twoPercentiles(point.readLatency()),
          twoPercentiles(point.writeLatency()));
    }
    return table.render();
  }

  /** The goals at 95 / 5, for each Lockstep series that ran with Curator's. */
  private static String goals(ReadShareScenario.Run run) {
    Point curator = run.point(Mix.NINETY_FIVE_FIVE, Series.CURATOR);
    if (curator == null) {
      return "";
    }
    StringBuilder lines = new StringBuilder();
    for (Series series : List.of(Series.SHARING, Series.SHARING_LINGER)) {
      Point sharing = run.point(Mix.NINETY_FIVE_FIVE, series);
      if (sharing == null) {
        continue;
      }
      double ratio = ratio(sharing, curator);
      double perRead = sharing.requestsPerRead();
      lines.append(
          String.format(
              Locale.ROOT,
              "%n**Goals** (issue 37, at 95 / 5, %s): at least %s Curator's acquisitions/s: %s, %s;"
                  + " fewer than %s requests per read: %.3f, %s.%n",
              series.label(),
              Figures.ratio(GOAL_RATIO),
              Figures.ratio(ratio),
              ratio >= GOAL_RATIO ? "met" : "**missed**",
              decimals(GOAL_REQUESTS_PER_READ),
              perRead,
              perRead < GOAL_REQUESTS_PER_READ ? "met" : "**missed**"));
    }
    return lines.toString();
  }

  private static double ratio(Point point, Point curator) {
    return point.acquisitionsPerSecond() / curator.acquisitionsPerSecond();
  }

  /** "1.20 / 5.00", or "–" without any acquisition. */
  private static String twoPercentiles(org.HdrHistogram.Histogram latency) {
    if (latency.getTotalCount() == 0) {
      return "–";
    }
    return number(LoadResult.millis(latency, 50)) + " / " + number(LoadResult.millis(latency, 99));
  }
}

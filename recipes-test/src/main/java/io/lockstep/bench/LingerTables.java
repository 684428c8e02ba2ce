package io.lockstep.bench;

import static io.lockstep.bench.Figures.decimals;
import static io.lockstep.bench.Figures.number;

import java.time.Duration;
import java.util.Locale;

/**
 * The block of the lock caching section ({@link LingerRuns}): a line saying when and how it ran
 * (the block can be updated without the rest of the page), the loop alone with each series' ratio
 * to Curator's, and the two processes taking turns. Returns "" when the run did not measure it.
 */
final class LingerTables {
  private final SuiteResults results;

  LingerTables(SuiteResults results) {
    this.results = results;
  }

  /**
   * The block, or "" if the section did not run.
   *
   * @param command the command of the run, to print
   * @param cores the cores available to the JVM, to judge whether the machine was shared
   */
  String block(String command, int cores) {
    LingerRuns.Run run = results.lingerRun;
    if (run == null) {
      return "";
    }
    return BenchmarkPage.measuredLine(
            run.started(), run.took(), command, run.loadBefore(), run.loadAfter(), cores)
        + String.format(
            Locale.ROOT,
            "**Loop alone**: one thread, one client, acquire + release; %s of warm-up (the"
                + " first cycle takes the place), %s measured; requests counted on the server."
                + "%n%n",
            Figures.seconds(LingerRuns.WARM_UP),
            Figures.seconds(LingerRuns.MEASURED))
        + loops(run)
        + String.format(
            Locale.ROOT,
            "%n**Two processes taking turns**: two clients, one acquire + release each per round,"
                + " %d rounds after %d not counted; an acquire starts as the other process's"
                + " release returns. In the last two rows only Curator's acquires are timed: the"
                + " wait of a Curator process behind a Lockstep one.%n%n",
            LingerRuns.ROUNDS,
            LingerRuns.WARM_UP_ROUNDS)
        + turns(run);
  }

  private static String loops(LingerRuns.Run run) {
    MarkdownTable table =
        new MarkdownTable(
            "added round trip", "series", "cycles/s", "÷ Curator", "requests per cycle");
    table.alignRight(0, 2, 3, 4);
    for (LingerRuns.Loop loop : run.loops()) {
      LingerRuns.Loop curator = loop(run, loop.roundTrip(), LingerRuns.Series.CURATOR);
      table.row(
          SlowLinkRuns.label(loop.roundTrip()),
          loop.series().label(),
          number(loop.cyclesPerSecond()),
          curator == null ? "–" : Figures.ratio(loop.cyclesPerSecond() / curator.cyclesPerSecond()),
          String.format(Locale.ROOT, "%.3f", loop.requestsPerCycle()));
    }
    return table.render();
  }

  private static LingerRuns.Loop loop(LingerRuns.Run run, Duration trip, LingerRuns.Series series) {
    return run.loops().stream()
        .filter(l -> l.roundTrip().equals(trip) && l.series() == series)
        .findFirst()
        .orElse(null);
  }

  private static String turns(LingerRuns.Run run) {
    MarkdownTable table =
        new MarkdownTable(
            "added round trip",
            "processes",
            "acquires timed",
            "acquire p50 / p99 / p999 (ms)",
            "requests per round",
            "rounds/s (÷ without linger)");
    table.alignRight(0, 3, 4, 5);
    for (LingerRuns.Alternation turns : run.alternations()) {
      boolean same = turns.first() == turns.second();
      table.row(
          SlowLinkRuns.label(turns.roundTrip()),
          same
              ? "2 × " + turns.first().label()
              : turns.second().label() + " after " + turns.first().label(),
          turns.bothTimed() ? "both" : "Curator's",
          Figures.percentiles(turns.latency()),
          decimals(turns.requestsPerRound()),
          roundsPerSecond(run, turns));
    }
    return table.render();
  }

  /**
   * Rounds per second; for a lingering series, also as a share of the same pairing without linger
   * at the same round trip (the goal of adaptive linger: at least 0.95).
   */
  private static String roundsPerSecond(LingerRuns.Run run, LingerRuns.Alternation turns) {
    String rate = number(turns.roundsPerSecond());
    if (turns.first() != LingerRuns.Series.LINGER) {
      return rate;
    }
    LingerRuns.Series plainSecond =
        turns.second() == LingerRuns.Series.LINGER ? LingerRuns.Series.LOCKSTEP : turns.second();
    for (LingerRuns.Alternation other : run.alternations()) {
      if (other.roundTrip().equals(turns.roundTrip())
          && other.first() == LingerRuns.Series.LOCKSTEP
          && other.second() == plainSecond
          && other.roundsPerSecond() > 0) {
        return String.format(
            Locale.ROOT,
            "%s (%s)",
            rate,
            Figures.ratio(turns.roundsPerSecond() / other.roundsPerSecond()));
      }
    }
    return rate;
  }
}

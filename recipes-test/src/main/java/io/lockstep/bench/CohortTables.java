package io.lockstep.bench;

import static io.lockstep.bench.Figures.decimals;
import static io.lockstep.bench.Figures.mark;
import static io.lockstep.bench.Figures.number;

import io.lockstep.bench.ContentionScenario.ClientMode;
import java.time.Duration;
import java.util.Locale;

/**
 * The cohort section's tables ({@link CohortRuns}): each series' rate with {@link
 * CohortScenario#THREADS} threads on one client at each added round trip, and how long a waiter in
 * another process waited meanwhile. Returns "" when the run did not measure the section.
 */
final class CohortTables {
  private final SuiteResults results;

  CohortTables(SuiteResults results) {
    this.results = results;
  }

  String cohort() {
    if (results.cohortRoundTrips().isEmpty()) {
      return "";
    }
    return rates() + "\n" + fairness();
  }

  private String rates() {
    MarkdownTable table =
        new MarkdownTable(
            "added round trip",
            "series",
            "acquisitions/s",
            "÷ Curator",
            "p50 / p99 / p999 (ms)",
            "requests per acquisition");
    table.alignRight(0, 2, 3, 4, 5);
    for (Duration trip : results.cohortRoundTrips()) {
      LoadResult curator = results.cohortRate(trip, Contender.CURATOR);
      for (Contender contender : Contender.in(ClientMode.SHARED)) {
        LoadResult point = results.cohortRate(trip, contender);
        if (point == null) {
          continue;
        }
        table.row(
            SlowLinkRuns.label(trip),
            contender.label(),
            number(point.perSecond()),
            curator == null ? "–" : mark(point.perSecond() / curator.perSecond()),
            Figures.percentiles(point.latency()),
            decimals(point.requestsPerAcquisition()));
      }
    }
    return table.isEmpty() ? "" : table.render();
  }

  private String fairness() {
    MarkdownTable table =
        new MarkdownTable(
            "added round trip",
            "series",
            "the other process's acquisitions (share)",
            "its longest wait, in the cohort's holds (p99)",
            "its longest wait, ms (p99)");
    table.alignRight(0, 2, 3, 4);
    for (Duration trip : results.cohortRoundTrips()) {
      for (Contender contender : Contender.in(ClientMode.SHARED)) {
        CohortScenario.Fairness run = results.fairness(trip, contender);
        if (run == null) {
          continue;
        }
        table.row(
            SlowLinkRuns.label(trip),
            contender.label(),
            String.format(
                Locale.ROOT,
                "%s of %s (%.3f)",
                number(run.outsiderAcquisitions()),
                number(run.outsiderAcquisitions() + run.cohortAcquisitions()),
                run.outsiderShare()),
            number(run.mostHoldsWaited()) + " (" + number(run.holdsWaited(99)) + ")",
            String.format(Locale.ROOT, "%.2f (%.2f)", run.longestWaitMillis(), run.waitMillis(99))
                + (run.unfinished() ? ", still waiting at the end" : ""));
      }
    }
    return table.isEmpty() ? "" : table.render();
  }
}

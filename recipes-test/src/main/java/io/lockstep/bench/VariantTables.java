package io.lockstep.bench;

import static io.lockstep.bench.Figures.decimals;
import static io.lockstep.bench.Figures.mark;
import static io.lockstep.bench.Figures.number;
import static io.lockstep.bench.Figures.ratio;

import io.lockstep.testing.Library;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The tables of the uncontended rows run another way: over a slow link, and with a Flight
 * Recording. Each method returns "" when the run did not measure the section.
 */
final class VariantTables {
  private final SuiteResults results;

  VariantTables(SuiteResults results) {
    this.results = results;
  }

  String slowLink() {
    List<Duration> trips = results.roundTrips();
    if (trips.isEmpty()) {
      return "";
    }
    MarkdownTable table =
        new MarkdownTable(
            "recipe",
            "added round trip",
            "Curator cycles/s",
            "Lockstep cycles/s",
            "Lockstep ÷ Curator",
            "round trips per cycle, Curator / Lockstep");
    table.alignRight(1, 2, 3, 4, 5);
    for (SuiteResults.Row row : results.slowLinkRows()) {
      for (Duration trip : trips) {
        SuiteResults.Score curator = results.slowLink(row, trip, Library.CURATOR);
        SuiteResults.Score ours = results.slowLink(row, trip, Library.LOCKSTEP);
        if (curator == null || ours == null) {
          continue;
        }
        double curatorTrips =
            ThroughputRows.roundTripsPerCycle(results, row, Library.CURATOR, trip);
        double oursTrips = ThroughputRows.roundTripsPerCycle(results, row, Library.LOCKSTEP, trip);
        table.row(
            row.label(),
            SlowLinkRuns.label(trip),
            Figures.rate(curator),
            Figures.rate(ours),
            mark(ours.perSecond() / curator.perSecond()),
            Double.isNaN(curatorTrips) ? "" : decimals(curatorTrips) + " / " + decimals(oursTrips));
      }
    }
    return roundTrips() + "\n" + table.render();
  }

  /** "A small read's round trip (median): 0.10 ms straight to the server; through the proxy..." */
  private String roundTrips() {
    List<String> parts = new ArrayList<>();
    for (Map.Entry<Duration, Double> trip : results.linkRoundTripMillis.entrySet()) {
      parts.add(
          String.format(
              Locale.ROOT,
              "%s ms with %s added",
              millis(trip.getValue()),
              SlowLinkRuns.label(trip.getKey())));
    }
    return String.format(
        Locale.ROOT,
        "A small read's round trip (median of 500 `exists`): %s ms straight to the server; through"
            + " the proxy, %s.\n",
        millis(results.directRoundTripMillis),
        String.join(", ", parts));
  }

  String recording() {
    MarkdownTable table =
        new MarkdownTable(
            "recipe",
            "Lockstep cycles/s, no recording",
            "Lockstep cycles/s, recording",
            "Lockstep, with ÷ without",
            "Curator cycles/s, no recording",
            "Curator cycles/s, recording",
            "Curator, with ÷ without",
            "Lockstep events recorded",
            "Lockstep requests per cycle, without / with");
    table.alignRight(1, 2, 3, 4, 5, 6, 7, 8);
    for (SuiteResults.Row row : results.recordingRows()) {
      SuiteResults.RecordingPoint oursOff = results.recording(row, Library.LOCKSTEP, false);
      SuiteResults.RecordingPoint oursOn = results.recording(row, Library.LOCKSTEP, true);
      SuiteResults.RecordingPoint curatorOff = results.recording(row, Library.CURATOR, false);
      SuiteResults.RecordingPoint curatorOn = results.recording(row, Library.CURATOR, true);
      SuiteResults.RecordingCount count = results.recordingCounts.get(row);
      table.row(
          row.label(),
          rate(oursOff),
          rate(oursOn),
          change(oursOff, oursOn),
          rate(curatorOff),
          rate(curatorOn),
          change(curatorOff, curatorOn),
          oursOn == null ? "" : number(oursOn.events()),
          count == null
              ? ""
              : decimals(count.without().requestsPerCycle())
                  + " / "
                  + decimals(count.with().requestsPerCycle()));
    }
    return table.isEmpty() ? "" : table.render();
  }

  private static String rate(SuiteResults.RecordingPoint point) {
    return point == null ? "" : Figures.rate(point.score());
  }

  private static String change(SuiteResults.RecordingPoint off, SuiteResults.RecordingPoint on) {
    if (off == null || on == null) {
      return "";
    }
    return ratio(on.score().perSecond() / off.score().perSecond())
        + (ThroughputRows.overlap(on.score(), off.score()) ? " (within error)" : "");
  }

  private static String millis(double millis) {
    return Double.isNaN(millis) ? "–" : String.format(Locale.ROOT, "%.2f", millis);
  }
}

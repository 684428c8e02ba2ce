package io.lockstep.bench;

import io.lockstep.testing.Library;
import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * One measured point of a load scenario.
 *
 * @param library whose recipe
 * @param threads the threads acquiring
 * @param perSecond acquisitions per second
 * @param latency acquire latency of all acquisitions, in nanoseconds
 * @param parts acquire latency per kind of acquisition where the scenario has several (reads, then
 *     writes), else empty
 * @param requestsPerAcquisition ZooKeeper requests per acquisition, from {@code mntr}
 */
record LoadResult(
    Library library,
    int threads,
    double perSecond,
    Histogram latency,
    List<Histogram> parts,
    double requestsPerAcquisition) {

  static LoadResult of(Library library, int threads, LoadRun.Outcome outcome) {
    List<Histogram> parts = outcome.histograms().size() > 1 ? outcome.histograms() : List.of();
    return new LoadResult(
        library,
        threads,
        outcome.perSecond(),
        outcome.merged(),
        parts,
        outcome.requestsPerOperation());
  }

  /** A latency percentile of all acquisitions, in milliseconds. */
  double millis(double percentile) {
    return millis(latency, percentile);
  }

  static double millis(Histogram histogram, double percentile) {
    return histogram.getValueAtPercentile(percentile) / 1e6;
  }
}

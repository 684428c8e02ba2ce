package io.lockstep.bench;

import io.lockstep.bench.ContentionScenario.ClientMode;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.Locale;

/**
 * The cohort section: local handoff against Curator's strict queue, through the slow link's {@link
 * TcpProxy} at each added round trip of the settings (0 ms: the proxy's own forwarding only).
 *
 * <p><b>Rates.</b> {@link CohortScenario#THREADS} threads share one client and contend for one
 * mutex of each {@link Contender} run with a shared client, as in the contention section ({@link
 * ContentionScenario}): acquisitions per second, acquire latency and requests per acquisition.
 *
 * <p><b>Fairness.</b> The same threads, and one more thread on a client of its own: how long that
 * other process waits, in time and in the cohort's holds ({@link CohortScenario}).
 *
 * <p><b>Command</b> (from the repository root; prints the results and leaves {@code docs/} alone):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--full --only cohort"
 * </pre>
 */
final class CohortRuns {
  private CohortRuns() {}

  static void run(ServerProbe probe, String connect, SuiteSettings settings, SuiteResults results)
      throws Exception {
    try (TcpProxy proxy = SlowLinkRuns.startProxy(connect)) {
      for (Duration roundTrip : settings.roundTrips()) {
        proxy.setLatency(roundTrip.dividedBy(2));
        String through = proxy.connectString();
        String trip = SlowLinkRuns.label(roundTrip);
        for (Contender contender : Contender.in(ClientMode.SHARED)) {
          LoadResult result =
              ContentionScenario.run(
                  probe, through, settings, contender, ClientMode.SHARED, CohortScenario.THREADS);
          results.cohortRates.add(new SuiteResults.CohortPoint(roundTrip, contender, result));
          log(
              String.format(
                  Locale.ROOT,
                  "cohort %s T=%d %s: %.0f acquisitions/s, p50 %.2f ms, p99 %.2f ms, %.2f"
                      + " requests/acquisition",
                  trip,
                  CohortScenario.THREADS,
                  contender.label(),
                  result.perSecond(),
                  result.millis(50),
                  result.millis(99),
                  result.requestsPerAcquisition()));
        }
        for (Contender contender : Contender.in(ClientMode.SHARED)) {
          CohortScenario.Fairness fairness =
              CohortScenario.fairness(through, settings, contender, roundTrip);
          results.fairness.add(fairness);
          log(
              String.format(
                  Locale.ROOT,
                  "cohort fairness %s T=%d+1 %s: outsider waited at most %d holds (p99 %.0f),"
                      + " longest %.2f ms (p99 %.2f ms)%s; outsider share %.3f (%d of %d)",
                  trip,
                  CohortScenario.THREADS,
                  contender.label(),
                  fairness.mostHoldsWaited(),
                  fairness.holdsWaited(99),
                  fairness.longestWaitMillis(),
                  fairness.waitMillis(99),
                  fairness.unfinished() ? ", still waiting at the end" : "",
                  fairness.outsiderShare(),
                  fairness.outsiderAcquisitions(),
                  fairness.outsiderAcquisitions() + fairness.cohortAcquisitions()));
        }
      }
    }
  }

  private static void log(String message) {
    System.out.println("[bench] " + message);
  }
}

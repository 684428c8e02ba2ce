package io.lockstep.bench;

import io.lockstep.testing.Library;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;

/**
 * Uncontended cycles over a slow link: the JMH benchmarks of the uncontended rows, run through a
 * {@link TcpProxy} between the benchmark's client and the server, which delays every chunk by half
 * the added round trip in each direction (0 ms: the proxy's own forwarding only). Both libraries of
 * a row run one right after the other at each setting. The round trip of a small read ({@code
 * exists} of {@code /}) is measured at each setting, and straight to the server, so that the page
 * can say what a round trip costs and how many of them a cycle waits for.
 *
 * <p><b>Command</b> (from the repository root; prints the results and leaves {@code docs/} alone):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--full --only slowlink"
 * </pre>
 */
final class SlowLinkRuns {
  private static final int WARM_UP_READS = 200;
  private static final int TIMED_READS = 500;

  private SlowLinkRuns() {}

  static void run(String connect, SuiteSettings settings, SuiteResults results) throws Exception {
    results.directRoundTripMillis = roundTripMillis(connect);
    log(String.format(Locale.ROOT, "round trip, straight: %.3f ms", results.directRoundTripMillis));
    try (TcpProxy proxy = startProxy(connect)) {
      for (Duration roundTrip : settings.roundTrips()) {
        proxy.setLatency(roundTrip.dividedBy(2));
        double measured = roundTripMillis(proxy.connectString());
        results.linkRoundTripMillis.put(roundTrip, measured);
        log(
            String.format(
                Locale.ROOT,
                "round trip through the proxy, %s added: %.3f ms",
                label(roundTrip),
                measured));
        for (SuiteResults.Row row : settings.slowLinkRows()) {
          Map<Library, SuiteResults.Score> scores =
              JmhRuns.run(settings, row, proxy.connectString());
          scores.forEach(
              (library, score) -> {
                results.slowLink.add(new SuiteResults.LinkPoint(row, roundTrip, library, score));
                log(
                    String.format(
                        Locale.ROOT,
                        "slow link %s %s %s: %.1f ± %.1f cycles/s",
                        label(roundTrip),
                        row.label(),
                        library.label(),
                        score.perSecond(),
                        score.error()));
              });
        }
      }
    }
  }

  /** A proxy in front of the server at {@code connect}, with no latency yet. */
  static TcpProxy startProxy(String connect) {
    int colon = connect.lastIndexOf(':');
    return TcpProxy.start(
        connect.substring(0, colon), Integer.parseInt(connect.substring(colon + 1)));
  }

  /** "0 ms", "1 ms", "0.5 ms". */
  static String label(Duration roundTrip) {
    return Figures.number(roundTrip.toNanos() / 1e6) + " ms";
  }

  /** The median time of a small read, in milliseconds, on a fresh client of {@code connect}. */
  static double roundTripMillis(String connect) throws Exception {
    try (Clients clients = new Clients(connect, 1)) {
      CuratorFramework client = clients.get(0);
      for (int i = 0; i < WARM_UP_READS; i++) {
        client.checkExists().forPath("/");
      }
      long[] times = new long[TIMED_READS];
      for (int i = 0; i < TIMED_READS; i++) {
        long start = System.nanoTime();
        client.checkExists().forPath("/");
        times[i] = System.nanoTime() - start;
      }
      Arrays.sort(times);
      return times[TIMED_READS / 2] / 1e6;
    }
  }

  private static void log(String message) {
    System.out.println("[bench] " + message);
  }
}

package io.lockstep.bench;

import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

/**
 * The lock caching section: a mutex built with {@code localHandoff().linger(1 min)} side by side
 * with Curator's {@code InterProcessMutex} and a plain {@code ReentrantMutex}, in one run, through
 * the slow link's {@link TcpProxy} at 0 and 1 ms of added round trip.
 *
 * <p><b>Loop alone.</b> One thread, one client, acquire + release in a loop: cycles per second over
 * {@link #MEASURED} after {@link #WARM_UP}, and requests per cycle counted on the server over the
 * measured cycles (the first cycle, which takes the place, is in the warm-up).
 *
 * <p><b>Alternation.</b> Two clients (two processes) take turns, one acquire + release each per
 * round, {@link #ROUNDS} rounds after {@link #WARM_UP_ROUNDS}: the latency of each acquire, which
 * starts right after the other process's release returned. Pairs: both Curator, both Lockstep
 * without linger, both with linger; and a Curator waiter after a Lockstep process with and without
 * linger (only Curator's acquires timed): the extra wait a lingering place costs Curator.
 *
 * <p><b>Command</b> (from the repository root; replaces the section's block in docs/):
 *
 * <pre>
 * mvn -B -Pbench -pl recipes-test verify -DskipTests -Dbench.args="--full --only linger --update"
 * </pre>
 */
final class LingerRuns {
  static final Duration KEPT = Duration.ofMinutes(1);
  static final Duration WARM_UP = Duration.ofSeconds(1);
  static final Duration MEASURED = Duration.ofSeconds(3);
  static final int WARM_UP_ROUNDS = 20;
  static final int ROUNDS = 200;
  static final List<Duration> ROUND_TRIPS = List.of(Duration.ZERO, Duration.ofMillis(1));

  /** Whose mutex, and how it is built. */
  enum Series {
    CURATOR("Curator InterProcessMutex"),
    LOCKSTEP("Lockstep ReentrantMutex"),
    LINGER("Lockstep ReentrantMutex, linger 1 min");

    private final String label;

    Series(String label) {
      this.label = label;
    }

    String label() {
      return label;
    }

    InterProcessLock newLock(CuratorFramework client, String path) {
      return switch (this) {
        case CURATOR -> new InterProcessMutex(client, path);
        case LOCKSTEP -> new ReentrantMutex(client, path);
        case LINGER -> ReentrantMutex.builder(client, path).localHandoff().linger(KEPT).build();
      };
    }
  }

  /** A loop alone: cycles per second and requests per cycle. */
  record Loop(Duration roundTrip, Series series, double cyclesPerSecond, double requestsPerCycle) {}

  /**
   * Two processes taking turns: {@code first}'s and {@code second}'s series, the latency of the
   * timed acquires (both sides, or {@code second}'s only), requests per round, and rounds (turns,
   * so handoffs from one process to the other) per second.
   */
  record Alternation(
      Duration roundTrip,
      Series first,
      Series second,
      boolean bothTimed,
      Histogram latency,
      double requestsPerRound,
      double roundsPerSecond) {}

  /** The section's run: when, how long, the load around it, and its points. */
  record Run(
      String started,
      Duration took,
      String loadBefore,
      String loadAfter,
      List<Loop> loops,
      List<Alternation> alternations) {}

  private LingerRuns() {}

  static void run(ServerProbe probe, String connect, SuiteResults results) throws Exception {
    Instant started = Instant.now();
    String loadBefore = MachineInfo.loadAverage();
    List<Loop> loops = new ArrayList<>();
    List<Alternation> alternations = new ArrayList<>();
    try (TcpProxy proxy = SlowLinkRuns.startProxy(connect)) {
      for (Duration trip : ROUND_TRIPS) {
        proxy.setLatency(trip.dividedBy(2));
        for (Series series : Series.values()) {
          Loop loop = loop(probe, proxy.connectString(), trip, series);
          loops.add(loop);
          log(
              String.format(
                  Locale.ROOT,
                  "linger loop %s %s: %.0f cycles/s, %.3f requests/cycle",
                  SlowLinkRuns.label(trip),
                  series.label(),
                  loop.cyclesPerSecond(),
                  loop.requestsPerCycle()));
        }
        for (Series series : Series.values()) {
          alternations.add(alternate(probe, proxy.connectString(), trip, series, series, true));
        }
        alternations.add(
            alternate(probe, proxy.connectString(), trip, Series.LOCKSTEP, Series.CURATOR, false));
        alternations.add(
            alternate(probe, proxy.connectString(), trip, Series.LINGER, Series.CURATOR, false));
      }
    }
    results.lingerRun =
        new Run(
            BenchmarkSuite.date(started),
            Duration.between(started, Instant.now()),
            loadBefore,
            MachineInfo.loadAverage(),
            loops,
            alternations);
  }

  private static Loop loop(ServerProbe probe, String connect, Duration trip, Series series)
      throws Exception {
    try (Clients clients = new Clients(connect, 1)) {
      InterProcessLock lock = series.newLock(clients.get(0), Paths.unique("linger-loop"));
      cycleFor(lock, WARM_UP);
      ServerCounters before = probe.settled();
      long start = System.nanoTime();
      long cycles = cycleFor(lock, MEASURED);
      double seconds = (System.nanoTime() - start) / 1e9;
      ServerCounters after = probe.settled();
      return new Loop(
          trip, series, cycles / seconds, (double) after.since(before).requests() / cycles);
    }
  }

  private static long cycleFor(InterProcessLock lock, Duration period) throws Exception {
    long end = System.nanoTime() + period.toNanos();
    long cycles = 0;
    do {
      for (int i = 0; i < 64; i++) { // the clock read sparsely: a kept place cycles in nanoseconds
        lock.acquire();
        lock.release();
      }
      cycles += 64;
    } while (System.nanoTime() - end < 0);
    return cycles;
  }

  private static Alternation alternate(
      ServerProbe probe,
      String connect,
      Duration trip,
      Series first,
      Series second,
      boolean bothTimed)
      throws Exception {
    try (Clients clients = new Clients(connect, 2)) {
      String path = Paths.unique("linger-turns");
      InterProcessLock[] locks = {
        first.newLock(clients.get(0), path), second.newLock(clients.get(1), path)
      };
      Histogram latency = new Histogram(3);
      for (int round = 0; round < WARM_UP_ROUNDS; round++) {
        turn(locks[round % 2], null);
      }
      ServerCounters before = probe.settled();
      long start = System.nanoTime();
      for (int round = 0; round < ROUNDS; round++) {
        boolean timed = bothTimed || round % 2 == 1;
        turn(locks[round % 2], timed ? latency : null);
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      ServerCounters after = probe.settled();
      Alternation result =
          new Alternation(
              trip,
              first,
              second,
              bothTimed,
              latency,
              (double) after.since(before).requests() / ROUNDS,
              ROUNDS / seconds);
      log(
          String.format(
              Locale.ROOT,
              "linger turns %s %s / %s: p50 %.2f ms, p99 %.2f ms, %.2f requests/round, %.0f"
                  + " rounds/s",
              SlowLinkRuns.label(trip),
              first.label(),
              second.label(),
              LoadResult.millis(latency, 50),
              LoadResult.millis(latency, 99),
              result.requestsPerRound(),
              result.roundsPerSecond()));
      return result;
    }
  }

  /** One process's turn: acquire (timed into {@code latency} unless null), release. */
  private static void turn(InterProcessLock lock, Histogram latency) throws Exception {
    long start = System.nanoTime();
    if (!lock.acquire(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("a turn waited 30 s for the lock");
    }
    if (latency != null) {
      latency.recordValue(System.nanoTime() - start);
    }
    lock.release();
  }

  private static void log(String message) {
    System.out.println("[bench] " + message);
  }
}

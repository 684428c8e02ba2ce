package io.lockstep.bench;

import io.lockstep.bench.ContentionScenario.ClientMode;
import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Runs the suite's sections one by one against the suite's server, filling {@link SuiteResults} and
 * logging each point as it is measured. The slow link and the Flight Recorder have runners of their
 * own ({@link SlowLinkRuns}, {@link RecordingRuns}).
 */
final class SectionRuns {
  private final ServerProbe probe;
  private final String connect;
  private final SuiteSettings settings;
  private final SuiteResults results;

  SectionRuns(ServerProbe probe, String connect, SuiteSettings settings, SuiteResults results) {
    this.probe = probe;
    this.connect = connect;
    this.settings = settings;
    this.results = results;
  }

  /** The uncontended rows, single-path or multi-lock. */
  static List<SuiteResults.Row> rows(boolean multi) {
    return SuiteResults.UNCONTENDED_ROWS.stream()
        .filter(row -> (row.recipe() == Recipe.MULTI) == multi)
        .toList();
  }

  /**
   * The uncontended rows given: first the counting pass over all of them, then their JMH scores;
   * and when and how that ran, for their block.
   */
  void uncontended(List<SuiteResults.Row> rows) throws Exception {
    Instant started = Instant.now();
    String loadBefore = MachineInfo.loadAverage();
    count(rows);
    jmh(rows);
    results.uncontendedRun =
        new SuiteResults.UncontendedRun(
            BenchmarkSuite.date(started),
            Duration.between(started, Instant.now()),
            loadBefore,
            MachineInfo.loadAverage());
  }

  /** The counting pass: request and byte counts per uncontended cycle, one fresh client a row. */
  private void count(List<SuiteResults.Row> rows) throws Exception {
    for (SuiteResults.Row row : rows) {
      for (Library library : Library.values()) {
        try (Clients clients = new Clients(connect, 1)) {
          CycleCost cost =
              CycleCost.measure(
                  probe,
                  clients.get(0),
                  library,
                  row.recipe(),
                  Paths.unique("count"),
                  row.paths(),
                  settings.countedCycles());
          results.cost(row, library, cost);
          log(
              String.format(
                  "count %s %s: %.2f requests, %.0f response bytes per cycle",
                  row.label(),
                  library.label(),
                  cost.requestsPerCycle(),
                  cost.responseBytesPerCycle()));
        }
      }
    }
  }

  /** The JMH throughput and allocation of each row, straight to the server. */
  private void jmh(List<SuiteResults.Row> rows) throws Exception {
    for (SuiteResults.Row row : rows) {
      Map<Library, SuiteResults.Score> scores = JmhRuns.run(settings, row, connect);
      scores.forEach(
          (library, score) -> {
            results.score(row, library, score);
            log(
                String.format(
                    Locale.ROOT,
                    "jmh %s %s: %.1f ± %.1f cycles/s, %.0f bytes allocated per cycle",
                    row.label(),
                    library.label(),
                    score.perSecond(),
                    score.error(),
                    score.allocatedBytes()));
          });
    }
  }

  void handoff() throws Exception {
    int warmUp = settings.queueLengths().get(0);
    for (Library library : Library.values()) {
      var unused = HandoffScenario.run(probe, connect, library, warmUp, settings.handoffSessions());
      log("handoff warm-up drain of " + warmUp + " " + library.label() + " done (not reported)");
    }
    for (int waiters : settings.queueLengths()) {
      for (int repeat = 0; repeat < settings.handoffRepeats(waiters); repeat++) {
        List<Library> order = List.of(Library.values());
        if (repeat % 2 == 1) { // each library goes first as often as the other
          order = new ArrayList<>(order);
          Collections.reverse(order);
        }
        for (Library library : order) {
          HandoffScenario.Result result =
              HandoffScenario.run(probe, connect, library, waiters, settings.handoffSessions());
          results.handoffs.add(result);
          log(
              String.format(
                  "handoff N=%d %s: drain %.1f ms, %.0f us/handoff, %.2f requests and %.0f bytes"
                      + " per handoff, %.2f watches fired per delete (max %d)",
                  waiters,
                  library.label(),
                  result.drainMillis(),
                  result.handoffMicros(),
                  result.requestsPerHandoff(),
                  result.responseBytesPerHandoff(),
                  result.watchesPerDelete(),
                  result.maxDeletedWatches()));
        }
      }
    }
  }

  void contention() throws Exception {
    for (ClientMode mode : ClientMode.values()) {
      for (int threads : settings.threadCounts()) {
        for (Contender contender : Contender.in(mode)) {
          LoadResult result =
              ContentionScenario.run(probe, connect, settings, contender, mode, threads);
          results.contention(mode, contender, result);
          log(
              String.format(
                  "contention %s T=%d %s: %s",
                  mode.label(), threads, contender.label(), describe(result)));
        }
      }
    }
  }

  void mixes() throws Exception {
    for (double share : settings.readShares()) {
      for (Library library : Library.values()) {
        LoadResult result = ReadWriteMixScenario.run(probe, connect, settings, library, share);
        results.mixes.computeIfAbsent(share, s -> new ArrayList<>()).add(result);
        log(
            String.format(
                "rw %.0f%% reads %s: %s", share * 100, library.label(), describe(result)));
      }
    }
  }

  void multiContention() throws Exception {
    for (Library library : Library.values()) {
      LoadResult result = MultiLockContentionScenario.run(probe, connect, settings, library);
      results.multi.add(result);
      log("multi-lock contention " + library.label() + ": " + describe(result));
    }
  }

  /** Many waiters on one client; Curator only up to the largest N the settings give it. */
  void waiters() throws Exception {
    for (int count : settings.waiterCounts()) {
      for (Library library : List.of(Library.LOCKSTEP, Library.CURATOR)) {
        if (library == Library.CURATOR && count > settings.curatorWaitersMax()) {
          log("waiters N=" + count + " Curator: not run (above --curator-waiters)");
          continue;
        }
        WaitersScenario.Result result =
            WaitersScenario.run(connect, library, count, settings.waitersTimeout());
        results.waiters.add(result);
        log(
            result.finished()
                ? String.format(
                    Locale.ROOT,
                    "waiters N=%d %s: queued in %.0f ms, drained in %.0f ms, %.0f heap bytes and"
                        + " %.3f threads per waiter, at most %.0f live threads, in order: %s",
                    count,
                    library.label(),
                    result.queueMillis(),
                    result.drainMillis(),
                    result.heapPerWaiter(),
                    result.threadsPerWaiter(),
                    result.peakThreads(),
                    result.inOrder())
                : "waiters N="
                    + count
                    + " "
                    + library.label()
                    + ": stopped after "
                    + settings.waitersTimeout());
      }
    }
  }

  /** Watch events per acquisition, every contender, both client modes. */
  void watches() throws Exception {
    for (ClientMode mode : List.of(ClientMode.OWN, ClientMode.SHARED)) {
      for (Contender contender : Contender.in(mode)) {
        WatchScenario.Result result =
            WatchScenario.run(
                probe,
                connect,
                contender,
                mode,
                settings.watchClients(),
                settings.watchAcquisitions());
        results.watches.add(result);
        log(
            String.format(
                Locale.ROOT,
                "watches %s T=%d %s: %.2f watch events per acquisition (%.2f deleted, %.2f"
                    + " children, %.2f changed), %.2f requests per acquisition",
                mode.label(),
                settings.watchClients(),
                contender.label(),
                result.watchesPerAcquisition(),
                result.deletedPerAcquisition(),
                result.childPerAcquisition(),
                result.changedPerAcquisition(),
                result.requestsPerAcquisition()));
      }
    }
  }

  /** Every form of the unreachable section; Curator's row only if the settings give it trials. */
  void unreachable() throws Exception {
    Instant started = Instant.now();
    String loadBefore = MachineInfo.loadAverage();
    for (UnreachableScenario.Form form : UnreachableScenario.forms()) {
      boolean curator = form.library() == Library.CURATOR;
      if (curator && settings.curatorUnreachableTrials() == 0) {
        continue;
      }
      UnreachableScenario.Result result =
          UnreachableScenario.run(
              connect,
              form,
              curator ? 0 : settings.unreachableWarmUp(),
              curator ? settings.curatorUnreachableTrials() : settings.unreachableTrials());
      results.unreachable.add(result);
      log("unreachable " + UnreachableScenario.describe(result));
    }
    results.unreachableRun =
        new UnreachableScenario.Run(
            BenchmarkSuite.date(started),
            Duration.between(started, Instant.now()),
            loadBefore,
            MachineInfo.loadAverage(),
            settings.unreachableTrials(),
            settings.unreachableWarmUp(),
            settings.curatorUnreachableTrials());
  }

  /**
   * The semaphore, uncontended and under contention, and leader handoffs, each library in turn
   * ({@link SemaphoreScenario}, {@link ElectionScenario}).
   */
  void semaphoreElection() throws Exception {
    Instant started = Instant.now();
    String loadBefore = MachineInfo.loadAverage();
    int maxLeases = settings.semaphoreMaxLeases();
    for (Library library : Library.values()) {
      try (Clients clients = new Clients(connect, 1)) {
        CycleCost cost =
            SemaphoreScenario.count(
                probe,
                clients.get(0),
                library,
                Paths.unique("semaphore-count"),
                maxLeases,
                settings.countedCycles());
        results.semaphoreCosts.put(library, cost);
        log(
            String.format(
                Locale.ROOT,
                "semaphore uncontended %s: %.2f requests, %.2f writes, %.0f response bytes per"
                    + " acquire + return",
                library.label(),
                cost.requestsPerCycle(),
                cost.writesPerCycle(),
                cost.responseBytesPerCycle()));
      }
    }
    for (Library library : Library.values()) {
      SemaphoreScenario.Point point =
          SemaphoreScenario.uncontended(probe, connect, settings, library);
      results.semaphore.add(point);
      log(
          String.format(
              Locale.ROOT,
              "semaphore uncontended %s: %.0f cycles/s, cycle p50 %.2f ms, p99 %.2f ms",
              library.label(),
              point.result().perSecond(),
              point.result().millis(50),
              point.result().millis(99)));
    }
    for (Library library : Library.values()) {
      SemaphoreScenario.Point point =
          SemaphoreScenario.contended(
              probe,
              connect,
              settings,
              library,
              settings.semaphoreClients(),
              settings.semaphoreThreadsPerClient());
      results.semaphore.add(point);
      log(
          String.format(
              Locale.ROOT,
              "semaphore %d clients x %d threads, max %d, %s: %.0f leases/s, acquire p50 %.2f ms,"
                  + " p99 %.2f ms, %.2f requests and %.2f watch events per lease, at most %d"
                  + " held",
              point.clients(),
              point.threadsPerClient(),
              maxLeases,
              library.label(),
              point.result().perSecond(),
              point.result().millis(50),
              point.result().millis(99),
              point.result().requestsPerAcquisition(),
              point.watchesPerLease(),
              point.mostHeld()));
    }
    for (Library library : Library.values()) {
      ElectionScenario.Result result =
          ElectionScenario.run(
              probe,
              connect,
              library,
              settings.electionParticipants(),
              settings.electionWarmUp(),
              settings.electionHandoffs());
      results.elections.add(result);
      log(
          String.format(
              Locale.ROOT,
              "election N=%d %s: %.0f handoffs/s, handoff p50 %.2f ms, p99 %.2f ms, %.2f"
                  + " requests, %.2f writes and %.2f watch events per handoff (%.2f deleted,"
                  + " %.2f children, %.2f changed)",
              result.participants(),
              library.label(),
              result.handoffsPerSecond(),
              result.millis(50),
              result.millis(99),
              result.requestsPerHandoff(),
              result.writesPerHandoff(),
              result.watchesPerHandoff(),
              per(result.traffic().deletedWatchesFired(), result.handoffs()),
              per(result.traffic().childWatchesFired(), result.handoffs()),
              per(result.traffic().changedWatchesFired(), result.handoffs())));
    }
    results.semaphoreElectionRun =
        new SemaphoreElectionTables.Run(
            BenchmarkSuite.date(started),
            Duration.between(started, Instant.now()),
            loadBefore,
            MachineInfo.loadAverage(),
            maxLeases,
            settings.countedCycles(),
            settings.semaphoreClients(),
            settings.semaphoreThreadsPerClient(),
            settings.loadWarmup(),
            settings.loadMeasured(),
            settings.electionParticipants(),
            settings.electionWarmUp(),
            settings.electionHandoffs());
  }

  private static double per(long count, long operations) {
    return (double) count / Math.max(1, operations);
  }

  private static String describe(LoadResult result) {
    return String.format(
        "%.0f acquisitions/s, p50 %.2f ms, p99 %.2f ms, p999 %.2f ms, %.2f requests/acquisition",
        result.perSecond(),
        result.millis(50),
        result.millis(99),
        result.millis(99.9),
        result.requestsPerAcquisition());
  }

  static void log(String message) {
    System.out.println("[bench] " + message);
  }
}

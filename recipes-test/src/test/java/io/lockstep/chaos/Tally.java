package io.lockstep.chaos;

import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.LongAdder;

/** What a chaos run counted, and the violations it found. */
final class Tally {
  final LongAdder acquired = new LongAdder();
  final LongAdder timedOut = new LongAdder();
  final LongAdder failed = new LongAdder();
  final LongAdder released = new LongAdder();
  final LongAdder serverKills = new LongAdder();
  final LongAdder leaderKills = new LongAdder();
  final LongAdder sessionExpiries = new LongAdder();
  final LongAdder partitionsCut = new LongAdder();
  final LongAdder partitionsSilent = new LongAdder();
  final LongAdder slowLinks = new LongAdder();
  final LongAdder clientCloses = new LongAdder();
  final LongAdder slowFirstConnects = new LongAdder();
  final LongAdder lostAnswers = new LongAdder();
  final LongAdder atRisk = new LongAdder();
  final LongAdder lost = new LongAdder();
  final LongAdder fencedWritesAccepted = new LongAdder();
  final LongAdder fencedWritesRefused = new LongAdder();
  final LongAdder zkWritesCommitted = new LongAdder();
  final LongAdder zkWritesRefused = new LongAdder();
  final LongAdder zkWritesUnsure = new LongAdder();
  final LongAdder localHandoffAcquired = new LongAdder();
  final LongAdder localHandoffTimedOut = new LongAdder();
  final LongAdder localHandoffFailed = new LongAdder();
  final LongAdder localSuccessions = new LongAdder();
  final LongAdder elected = new LongAdder();
  final LongAdder leaderAtRisk = new LongAdder();
  final LongAdder leaderRestored = new LongAdder();
  final LongAdder leadershipsLost = new LongAdder();
  final LongAdder relinquished = new LongAdder();
  final LongAdder electionsRebuilt = new LongAdder();
  final LongAdder leaderWritesAccepted = new LongAdder();
  final LongAdder leaderWritesRefused = new LongAdder();
  final LongAdder leaderZkCommitted = new LongAdder();
  final LongAdder leaderZkRefused = new LongAdder();
  final LongAdder leaderZkUnsure = new LongAdder();
  final LongAdder semRequests = new LongAdder();
  final LongAdder semPairRequests = new LongAdder();
  final LongAdder semLeases = new LongAdder();
  final LongAdder semTimedOut = new LongAdder();
  final LongAdder semFailed = new LongAdder();
  final LongAdder semAtRisk = new LongAdder();
  final LongAdder semLost = new LongAdder();
  final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();

  void violation(String what) {
    violations.add(what);
  }

  long faults() {
    return serverKills.sum()
        + sessionExpiries.sum()
        + partitionsCut.sum()
        + partitionsSilent.sum()
        + slowLinks.sum()
        + clientCloses.sum()
        + slowFirstConnects.sum()
        + lostAnswers.sum();
  }

  /** One line per figure, as the chaos profile prints them. */
  List<String> summary(ChaosRun.Config config) {
    return List.of(
        String.format(
            "chaos run: seed=%d duration=%ds clients=%d workers=%d client-faults=%s",
            config.seed(),
            config.duration().toSeconds(),
            config.clients(),
            config.clients() * config.workersPerClient(),
            config.clientFaults() ? "on" : "off"),
        String.format(
            "chaos operations: acquired=%d timed-out=%d failed=%d released=%d",
            acquired.sum(), timedOut.sum(), failed.sum(), released.sum()),
        String.format(
            "chaos faults: server-kills=%d (leader %d) session-expiries=%d partitions=%d (cut %d,"
                + " silent %d) slow-links=%d client-closes=%d slow-first-connects=%d"
                + " lost-create-answers=%d",
            serverKills.sum(),
            leaderKills.sum(),
            sessionExpiries.sum(),
            partitionsCut.sum() + partitionsSilent.sum(),
            partitionsCut.sum(),
            partitionsSilent.sum(),
            slowLinks.sum(),
            clientCloses.sum(),
            slowFirstConnects.sum(),
            lostAnswers.sum()),
        String.format(
            "chaos local handoff: acquired=%d timed-out=%d failed=%d successive-local-holds=%d",
            localHandoffAcquired.sum(),
            localHandoffTimedOut.sum(),
            localHandoffFailed.sum(),
            localSuccessions.sum()),
        String.format(
            "chaos election: elected=%d lost=%d at-risk=%d restored=%d relinquished=%d"
                + " rebuilt-on-new-client=%d; leader writes: resource accepted=%d"
                + " refused-stale=%d; zookeeper committed=%d refused-by-ownership-check=%d"
                + " unsure(connection)=%d",
            elected.sum(),
            leadershipsLost.sum(),
            leaderAtRisk.sum(),
            leaderRestored.sum(),
            relinquished.sum(),
            electionsRebuilt.sum(),
            leaderWritesAccepted.sum(),
            leaderWritesRefused.sum(),
            leaderZkCommitted.sum(),
            leaderZkRefused.sum(),
            leaderZkUnsure.sum()),
        String.format(
            "chaos semaphore: requests=%d (of two leases %d) leases-acquired=%d timed-out=%d"
                + " failed=%d leases-at-risk=%d leases-lost=%d",
            semRequests.sum(),
            semPairRequests.sum(),
            semLeases.sum(),
            semTimedOut.sum(),
            semFailed.sum(),
            semAtRisk.sum(),
            semLost.sum()),
        String.format("chaos loss notifications: at-risk=%d lost=%d", atRisk.sum(), lost.sum()),
        String.format(
            "chaos fenced writes: resource accepted=%d refused-stale=%d; zookeeper committed=%d"
                + " refused-by-ownership-check=%d unsure(connection)=%d",
            fencedWritesAccepted.sum(),
            fencedWritesRefused.sum(),
            zkWritesCommitted.sum(),
            zkWritesRefused.sum(),
            zkWritesUnsure.sum()),
        String.format("chaos violations: %d", violations.size()));
  }
}

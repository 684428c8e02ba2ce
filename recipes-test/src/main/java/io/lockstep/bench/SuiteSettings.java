package io.lockstep.bench;

import io.lockstep.testing.Recipe;
import java.time.Duration;
import java.util.List;

/**
 * How long and how large the suite runs: {@link #quick()} (about a quarter of an hour on two cores)
 * or {@link #full()}.
 *
 * @param mode "quick" or "full"
 * @param jmhWarmupIterations JMH warm-up iterations per benchmark point
 * @param jmhIterations JMH measured iterations per benchmark point
 * @param jmhIterationTime length of one JMH iteration
 * @param jmhForks JMH forks per benchmark point
 * @param countedCycles uncontended cycles counted per row for the request counts
 * @param queueLengths N, the waiters queued in the handoff scenario
 * @param handoffSessions the sessions the waiters share
 * @param handoffRepeats drains per library and N, at least (the page reports the median; a short
 *     queue gets more, see {@link #handoffRepeats(int)})
 * @param threadCounts T, the threads of the contention scenario
 * @param loadWarmup warm-up period of each load point
 * @param loadMeasured measured period of each load point
 * @param readShares the read shares of the read-write mixes
 * @param mixThreads the threads of the read-write mixes
 * @param multiThreads the threads of the multi-lock contention scenario
 * @param multiPaths P, the paths the multi-locks draw from
 * @param multiK K, the paths each multi-lock takes
 * @param roundTrips the round trips the slow link adds (half of each in each direction)
 * @param slowLinkRows the uncontended rows timed over the slow link
 * @param recordingRows the uncontended rows timed with and without a Flight Recording
 * @param waiterCounts N, the asynchronous waiters queued on one lock through one client
 * @param curatorWaitersMax the largest N Curator's thread-per-waiter run is given
 * @param waitersTimeout how long one run of the many-waiters scenario may take
 * @param watchClients the clients (and threads) of the watch-event scenario
 * @param watchAcquisitions acquisitions per thread in the watch-event scenario
 * @param unreachableTrials counted trials per Lockstep row of the unreachable section
 * @param unreachableWarmUp trials per Lockstep row of the unreachable section, not counted
 * @param curatorUnreachableTrials trials of Curator's row of the unreachable section (each takes
 *     tens of seconds)
 * @param semaphoreMaxLeases the {@code maxLeases} of both semaphores in the semaphore-election
 *     section
 * @param semaphoreClients C, the clients of the semaphore's contention rows
 * @param semaphoreThreadsPerClient T, the threads of each of those clients
 * @param electionParticipants N, the participants of an election, a client each
 * @param electionWarmUp handoffs run before the counted ones, not counted
 * @param electionHandoffs K, the handoffs counted per library
 */
record SuiteSettings(
    String mode,
    int jmhWarmupIterations,
    int jmhIterations,
    Duration jmhIterationTime,
    int jmhForks,
    int countedCycles,
    List<Integer> queueLengths,
    int handoffSessions,
    int handoffRepeats,
    List<Integer> threadCounts,
    Duration loadWarmup,
    Duration loadMeasured,
    List<Double> readShares,
    int mixThreads,
    int multiThreads,
    int multiPaths,
    int multiK,
    List<Duration> roundTrips,
    List<SuiteResults.Row> slowLinkRows,
    List<SuiteResults.Row> recordingRows,
    List<Integer> waiterCounts,
    int curatorWaitersMax,
    Duration waitersTimeout,
    int watchClients,
    int watchAcquisitions,
    int unreachableTrials,
    int unreachableWarmUp,
    int curatorUnreachableTrials,
    int semaphoreMaxLeases,
    int semaphoreClients,
    int semaphoreThreadsPerClient,
    int electionParticipants,
    int electionWarmUp,
    int electionHandoffs) {

  /** Handoffs a point of the handoff section covers at least, over its drains. */
  static final int HANDOFFS_PER_POINT = 1_500;

  /**
   * Drains per library at queue length {@code waiters}: {@link #handoffRepeats()}, or more for a
   * short queue, so that every point covers about as many handoffs (a drain of 100 lasts 100 ms,
   * and a median of three such is mostly noise).
   */
  int handoffRepeats(int waiters) {
    int enough = (HANDOFFS_PER_POINT + waiters - 1) / waiters;
    return Math.max(handoffRepeats, Math.min(enough, 5 * handoffRepeats));
  }

  /** The single-path uncontended rows: the recipes of {@link UncontendedLockBenchmark}. */
  static final List<SuiteResults.Row> SINGLE_PATH_ROWS =
      SuiteResults.UNCONTENDED_ROWS.stream().filter(row -> row.recipe() != Recipe.MULTI).toList();

  /** These settings, with Curator's many-waiters run going up to {@code max} waiters. */
  SuiteSettings withCuratorWaitersMax(int max) {
    return new SuiteSettings(
        mode,
        jmhWarmupIterations,
        jmhIterations,
        jmhIterationTime,
        jmhForks,
        countedCycles,
        queueLengths,
        handoffSessions,
        handoffRepeats,
        threadCounts,
        loadWarmup,
        loadMeasured,
        readShares,
        mixThreads,
        multiThreads,
        multiPaths,
        multiK,
        roundTrips,
        slowLinkRows,
        recordingRows,
        waiterCounts,
        max,
        waitersTimeout,
        watchClients,
        watchAcquisitions,
        unreachableTrials,
        unreachableWarmUp,
        curatorUnreachableTrials,
        semaphoreMaxLeases,
        semaphoreClients,
        semaphoreThreadsPerClient,
        electionParticipants,
        electionWarmUp,
        electionHandoffs);
  }

  static SuiteSettings quick() {
    return new SuiteSettings(
        "quick",
        1,
        3,
        Duration.ofSeconds(1),
        1,
        20,
        List.of(100, 500, 2000),
        10,
        1,
        List.of(1, 2, 4, 8, 16),
        Duration.ofSeconds(1),
        Duration.ofSeconds(2),
        List.of(0.95, 0.50),
        8,
        8,
        16,
        4,
        List.of(Duration.ZERO, Duration.ofMillis(1)),
        List.of(new SuiteResults.Row(Recipe.MUTEX, 1), new SuiteResults.Row(Recipe.MULTI, 4)),
        List.of(new SuiteResults.Row(Recipe.MUTEX, 1)),
        List.of(1_000, 10_000),
        1_000,
        Duration.ofMinutes(5),
        8,
        50,
        10,
        2,
        1,
        4,
        4,
        4,
        5,
        10,
        100);
  }

  static SuiteSettings full() {
    return new SuiteSettings(
        "full",
        3,
        5,
        Duration.ofSeconds(2),
        1,
        100,
        List.of(100, 500, 2000),
        10,
        3,
        List.of(1, 2, 4, 8, 16),
        Duration.ofSeconds(3),
        Duration.ofSeconds(10),
        List.of(0.95, 0.50),
        8,
        8,
        16,
        4,
        List.of(Duration.ZERO, Duration.ofMillis(1)),
        SuiteResults.UNCONTENDED_ROWS,
        SINGLE_PATH_ROWS,
        List.of(1_000, 10_000),
        10_000,
        Duration.ofMinutes(10),
        8,
        250,
        30,
        3,
        3,
        4,
        4,
        4,
        5,
        25,
        500);
  }
}

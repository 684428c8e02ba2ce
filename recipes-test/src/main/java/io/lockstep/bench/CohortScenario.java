package io.lockstep.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.curator.framework.recipes.locks.InterProcessLock;

/**
 * The fairness of local handoff: how long a waiter in another process waits while one process's
 * threads take turns in memory. {@link #THREADS} threads share one client (the cohort) and one
 * thread has a client of its own (the outsider, another process: another session); all of them
 * acquire and release one mutex of one {@link Contender} in a loop, nothing done under the lock.
 *
 * <p><b>Workload.</b> Each cohort thread counts its acquisitions in one shared counter while it
 * holds. The outsider reads the counter before each {@code acquire()} and again once it holds: the
 * difference is the cohort's holds it waited for. After a warm-up period, a measured period records
 * the outsider's waits (time, and cohort holds) with HdrHistogram, and both sides' acquisitions. A
 * wait still unfinished when the period ends counts with what it waited so far.
 *
 * <p><b>Command</b> (from the repository root; prints the results and leaves {@code docs/} alone):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--full --only cohort"
 * </pre>
 */
final class CohortScenario {
  /** T, the threads sharing the cohort's client: the goal is set at 8. */
  static final int THREADS = 8;

  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);

  /**
   * One fairness run.
   *
   * @param roundTrip the round trip the proxy added
   * @param contender whose mutex, on both sides
   * @param threads the cohort's threads
   * @param seconds the length of the measured period
   * @param cohortAcquisitions the cohort's acquisitions in the measured period
   * @param waits the outsider's waits that ended in the measured period, in nanoseconds
   * @param holdsWaited the cohort's holds each of those waits counted
   * @param unfinishedWaitNanos how long the outsider had waited when the period ended, 0 if it was
   *     not waiting
   * @param unfinishedHoldsWaited the cohort's holds that unfinished wait had counted
   */
  record Fairness(
      Duration roundTrip,
      Contender contender,
      int threads,
      double seconds,
      long cohortAcquisitions,
      Histogram waits,
      Histogram holdsWaited,
      long unfinishedWaitNanos,
      long unfinishedHoldsWaited) {

    /** The outsider's acquisitions in the measured period. */
    long outsiderAcquisitions() {
      return waits.getTotalCount();
    }

    /** The outsider's share of all acquisitions; a strict queue gives it 1 / (T + 1). */
    double outsiderShare() {
      long all = cohortAcquisitions + outsiderAcquisitions();
      return all == 0 ? Double.NaN : (double) outsiderAcquisitions() / all;
    }

    /** Whether the outsider was still waiting when the measured period ended. */
    boolean unfinished() {
      return unfinishedWaitNanos > 0;
    }

    /** The most cohort holds one wait of the outsider counted, the unfinished one included. */
    long mostHoldsWaited() {
      long most = waits.getTotalCount() == 0 ? 0 : holdsWaited.getMaxValue();
      return Math.max(most, unfinishedHoldsWaited);
    }

    /** A percentile of the cohort holds the finished waits counted; NaN without any. */
    double holdsWaited(double percentile) {
      return holdsWaited.getTotalCount() == 0
          ? Double.NaN
          : holdsWaited.getValueAtPercentile(percentile);
    }

    /** The outsider's longest wait, the unfinished one included, in milliseconds. */
    double longestWaitMillis() {
      long longest = waits.getTotalCount() == 0 ? 0 : waits.getMaxValue();
      return Math.max(longest, unfinishedWaitNanos) / 1e6;
    }

    /** A percentile of the outsider's finished waits, in milliseconds; NaN without any. */
    double waitMillis(double percentile) {
      return waits.getTotalCount() == 0 ? Double.NaN : LoadResult.millis(waits, percentile);
    }
  }

  private CohortScenario() {}

  /** Runs the cohort and the outsider on {@code connect} for the suite's warm-up and period. */
  static Fairness fairness(
      String connect, SuiteSettings settings, Contender contender, Duration roundTrip)
      throws Exception {
    String path = Paths.unique("cohort-fairness");
    try (Clients cohort = new Clients(connect, 1);
        Clients outsider = new Clients(connect, 1)) {
      BenchZooKeeper.createDirectories(cohort.get(0), List.of(path));
      Run run = new Run();
      List<Thread> threads = new ArrayList<>();
      for (int i = 0; i < THREADS; i++) {
        InterProcessLock lock = contender.newLock(cohort.get(0), path);
        threads.add(run.thread("cohort-" + i, () -> run.cohortCycle(lock)));
      }
      InterProcessLock outsiderLock = contender.newLock(outsider.get(0), path);
      threads.add(run.thread("outsider", () -> run.outsiderCycle(outsiderLock)));
      threads.forEach(Thread::start);
      try {
        return run.measure(settings, contender, roundTrip);
      } finally {
        run.stop.set(true);
        for (Thread thread : threads) {
          thread.join(STOP_TIMEOUT.toMillis());
          if (thread.isAlive()) {
            throw new IllegalStateException(thread.getName() + " did not stop in " + STOP_TIMEOUT);
          }
        }
        if (run.failure.get() != null) {
          throw run.failure.get();
        }
      }
    }
  }

  /** The shared state of one run: its threads' counters and the outsider's recorders. */
  private static final class Run {
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicReference<Exception> failure = new AtomicReference<>();
    final CountDownLatch failed = new CountDownLatch(1);
    final AtomicLong cohortHolds = new AtomicLong();
    final Recorder waits = new Recorder(3);
    final Recorder holdsWaited = new Recorder(3);
    // The outsider's wait in progress: when it started (0: not waiting), the count it started at.
    final AtomicLong waitingSince = new AtomicLong();
    final AtomicLong waitingFrom = new AtomicLong();

    Thread thread(String name, LoadRun.Step cycle) {
      return new Thread(
          () -> {
            try {
              while (!stop.get()) {
                cycle.run();
              }
            } catch (Exception e) {
              failure.compareAndSet(null, e);
              stop.set(true);
              failed.countDown();
            }
          },
          "cohort-bench-" + name);
    }

    void cohortCycle(InterProcessLock lock) throws Exception {
      lock.acquire();
      cohortHolds.incrementAndGet(); // while holding: ordered with the outsider's holds
      lock.release();
    }

    void outsiderCycle(InterProcessLock lock) throws Exception {
      long from = cohortHolds.get();
      long start = System.nanoTime();
      waitingFrom.set(from);
      waitingSince.set(start);
      lock.acquire();
      long waited = cohortHolds.get() - from;
      long nanos = System.nanoTime() - start;
      waitingSince.set(0);
      waits.recordValue(nanos);
      holdsWaited.recordValue(waited);
      lock.release();
    }

    Fairness measure(SuiteSettings settings, Contender contender, Duration roundTrip)
        throws InterruptedException {
      if (failed.await(settings.loadWarmup().toNanos(), TimeUnit.NANOSECONDS)) {
        return null;
      }
      waits.getIntervalHistogram(); // drop the warm-up
      holdsWaited.getIntervalHistogram();
      long holdsBefore = cohortHolds.get();
      long start = System.nanoTime();
      if (failed.await(settings.loadMeasured().toNanos(), TimeUnit.NANOSECONDS)) {
        return null;
      }
      long holdsAfter = cohortHolds.get();
      long end = System.nanoTime();
      Histogram finished = waits.getIntervalHistogram();
      Histogram counted = holdsWaited.getIntervalHistogram();
      long since = waitingSince.get();
      long unfinishedNanos = since == 0 ? 0 : Math.max(1, end - since);
      long unfinishedHolds = since == 0 ? 0 : holdsAfter - waitingFrom.get();
      return new Fairness(
          roundTrip,
          contender,
          THREADS,
          (end - start) / 1e9,
          holdsAfter - holdsBefore,
          finished,
          counted,
          unfinishedNanos,
          unfinishedHolds);
    }
  }
}

package io.lockstep.bench;

import io.lockstep.recipes.locks.LocalHandoff;
import io.lockstep.recipes.locks.ReadWriteMutex;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;

/**
 * Read sharing (issue 37): {@link #READERS} reader threads and one writer thread of ONE client on
 * one path, Curator's {@code InterProcessReadWriteLock} side by side with {@code ReadWriteMutex}
 * built with {@code localHandoff()}, whose readers of one process share one read node.
 *
 * <p><b>Workload.</b> Each thread has a lock object of its own on the shared path and does nothing
 * under the lock. The mix is exact: the reads come in batches of {@code r} ({@link
 * Mix#NINETY_FIVE_FIVE}: 19, {@link Mix#EIGHTY_TWENTY}: 4), each followed by one write; the writer
 * starts its acquire once the batch's last read has started (while readers may still hold), and the
 * next batch's reads start once its release returned. Each acquire is timed with HdrHistogram;
 * after the suite's warm-up period, the measured period counts reads and writes, and from {@code
 * mntr} the requests the server received (every request, the writer's included: requests per read
 * divides them all by the reads).
 *
 * <p><b>Command</b> (from the repository root; replaces the section's block in docs/):
 *
 * <pre>
 * mvn -B -Pbench -pl recipes-test verify -DskipTests -Dbench.args="--full --only readshare --update"
 * </pre>
 */
final class ReadShareScenario {
  /** The reader threads: the 8. */
  static final int READERS = 8;

  /** How long a gated thread waits for its turn before it looks whether the run stopped. */
  private static final long TURN_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  /** The read-write mixes, as reads per write. */
  enum Mix {
    NINETY_FIVE_FIVE(19),
    EIGHTY_TWENTY(4);

    private final int readsPerWrite;

    Mix(int readsPerWrite) {
      this.readsPerWrite = readsPerWrite;
    }

    int readsPerWrite() {
      return readsPerWrite;
    }

    /** "95 / 5". */
    String label() {
      long reads = Math.round(100.0 * readsPerWrite / (readsPerWrite + 1));
      return reads + " / " + (100 - reads);
    }
  }

  /** Whose read-write lock, and how it is built. */
  enum Series {
    CURATOR("Curator InterProcessReadWriteLock"),
    SHARING("Lockstep ReadWriteMutex, localHandoff()"),
    /** Read sharing with the read node kept for up to a second with no reader. */
    SHARING_LINGER("Lockstep ReadWriteMutex, localHandoff(), linger(1 s)");

    private final String label;

    Series(String label) {
      this.label = label;
    }

    String label() {
      return label;
    }

    /** The read lock and the write lock of a new lock object on {@code path}. */
    InterProcessLock[] newLock(CuratorFramework client, String path) {
      return switch (this) {
        case CURATOR -> {
          InterProcessReadWriteLock lock = new InterProcessReadWriteLock(client, path);
          yield new InterProcessLock[] {lock.readLock(), lock.writeLock()};
        }
        case SHARING -> {
          ReadWriteMutex lock =
              ReadWriteMutex.builder(client, path)
                  .localHandoff(LocalHandoff.DEFAULT_MAX_IN_A_ROW)
                  .build();
          yield new InterProcessLock[] {lock.readLock(), lock.writeLock()};
        }
        case SHARING_LINGER -> {
          ReadWriteMutex lock =
              ReadWriteMutex.builder(client, path)
                  .localHandoff(LocalHandoff.DEFAULT_MAX_IN_A_ROW)
                  .linger(Duration.ofSeconds(1))
                  .build();
          yield new InterProcessLock[] {lock.readLock(), lock.writeLock()};
        }
      };
    }
  }

  /**
   * One measured point.
   *
   * @param mix the read-write mix
   * @param series whose lock
   * @param seconds the length of the measured period
   * @param readLatency the read acquires of the period, in nanoseconds
   * @param writeLatency the write acquires of the period, in nanoseconds
   * @param requests the requests the server received in the period (not settled: approximate at the
   *     edges, as in the other load scenarios)
   */
  record Point(
      Mix mix,
      Series series,
      double seconds,
      Histogram readLatency,
      Histogram writeLatency,
      long requests) {

    long reads() {
      return readLatency.getTotalCount();
    }

    long writes() {
      return writeLatency.getTotalCount();
    }

    double readsPerSecond() {
      return reads() / seconds;
    }

    double writesPerSecond() {
      return writes() / seconds;
    }

    double acquisitionsPerSecond() {
      return (reads() + writes()) / seconds;
    }

    /** Reads per write counted: the mix's, give or take one batch at the period's edges. */
    double readsPerWrite() {
      return writes() == 0 ? Double.NaN : (double) reads() / writes();
    }

    double requestsPerAcquisition() {
      return (double) requests / Math.max(1, reads() + writes());
    }

    /** All requests, the writer's included, per read. */
    double requestsPerRead() {
      return (double) requests / Math.max(1, reads());
    }
  }

  /**
   * The section's run: when, how long, the load around it, the periods, and its points.
   *
   * @param warmUp the warm-up period of each point
   * @param measured the measured period of each point
   */
  record Run(
      String started,
      Duration took,
      String loadBefore,
      String loadAfter,
      Duration warmUp,
      Duration measured,
      List<Point> points) {

    /** The point of {@code series} at {@code mix}, or null. */
    Point point(Mix mix, Series series) {
      return points.stream()
          .filter(p -> p.mix() == mix && p.series() == series)
          .findFirst()
          .orElse(null);
    }
  }

  private ReadShareScenario() {}

  /** Runs every mix for every series, Curator's first, for the suite's warm-up and period. */
  static Run run(ServerProbe probe, String connect, SuiteSettings settings) throws Exception {
    Instant started = Instant.now();
    String loadBefore = MachineInfo.loadAverage();
    List<Point> points = new ArrayList<>();
    for (Mix mix : Mix.values()) {
      for (Series series : Series.values()) {
        Point point = point(probe, connect, settings, mix, series);
        points.add(point);
        log(
            String.format(
                Locale.ROOT,
                "readshare %s %s: %.0f acquisitions/s (%.0f reads/s, %.0f writes/s, %.1f reads"
                    + " per write), %.3f requests/acquisition, %.3f requests/read",
                mix.label(),
                series.label(),
                point.acquisitionsPerSecond(),
                point.readsPerSecond(),
                point.writesPerSecond(),
                point.readsPerWrite(),
                point.requestsPerAcquisition(),
                point.requestsPerRead()));
      }
    }
    return new Run(
        BenchmarkSuite.date(started),
        Duration.between(started, Instant.now()),
        loadBefore,
        MachineInfo.loadAverage(),
        settings.loadWarmup(),
        settings.loadMeasured(),
        points);
  }

  private static Point point(
      ServerProbe probe, String connect, SuiteSettings settings, Mix mix, Series series)
      throws Exception {
    String path = Paths.unique("readshare-" + mix.readsPerWrite());
    try (Clients clients = new Clients(connect, 1)) {
      CuratorFramework client = clients.get(0);
      BenchZooKeeper.createDirectories(client, List.of(path));
      Recorder reads = LoadRun.newRecorder();
      Recorder writes = LoadRun.newRecorder();
      Turns turns = new Turns(mix.readsPerWrite());
      LoadRun.Outcome outcome =
          LoadRun.run(
              probe,
              READERS + 1,
              settings.loadWarmup(),
              settings.loadMeasured(),
              List.of(reads, writes),
              i -> {
                InterProcessLock[] lock = series.newLock(client, path);
                if (i < READERS) {
                  LoadRun.Step read = ContentionScenario.timedCycle(lock[0], reads);
                  return () -> {
                    if (turns.read()) {
                      read.run();
                    }
                  };
                }
                LoadRun.Step write = ContentionScenario.timedCycle(lock[1], writes);
                return () -> {
                  if (turns.write()) {
                    write.run();
                    turns.written();
                  }
                };
              });
      if (outcome == null) {
        throw new IllegalStateException("the " + series.label() + " run did not finish");
      }
      return new Point(
          mix,
          series,
          outcome.seconds(),
          outcome.histograms().get(0),
          outcome.histograms().get(1),
          outcome.traffic().requests());
    }
  }

  /**
   * The exact mix: read turns are handed out in batches of {@code readsPerWrite}; the write turn
   * comes once the batch's last read has started, and the next batch once the write is done. A
   * thread waiting for its turn gives up after {@link #TURN_POLL_NANOS}, so that the run can stop.
   */
  private static final class Turns {
    private final int readsPerWrite;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();

    /** Read turns handed out so far; guarded by {@code lock}. */
    private long readsStarted;

    /** Writes done so far; guarded by {@code lock}. */
    private long writesDone;

    Turns(int readsPerWrite) {
      this.readsPerWrite = readsPerWrite;
    }

    /** Takes a read turn, waiting while the current batch is all handed out; false if none came. */
    boolean read() throws InterruptedException {
      lock.lock();
      try {
        long nanos = TURN_POLL_NANOS;
        while (readsStarted >= batchEnd()) {
          if (nanos <= 0) {
            return false;
          }
          nanos = changed.awaitNanos(nanos);
        }
        readsStarted++;
        if (readsStarted == batchEnd()) {
          changed.signalAll(); // the write's turn
        }
        return true;
      } finally {
        lock.unlock();
      }
    }

    /** Waits for the write turn: the batch's reads all started; false if it did not come. */
    boolean write() throws InterruptedException {
      lock.lock();
      try {
        long nanos = TURN_POLL_NANOS;
        while (readsStarted < batchEnd()) {
          if (nanos <= 0) {
            return false;
          }
          nanos = changed.awaitNanos(nanos);
        }
        return true;
      } finally {
        lock.unlock();
      }
    }

    /** The write is done: the next batch of reads may start. */
    void written() {
      lock.lock();
      try {
        writesDone++;
        changed.signalAll();
      } finally {
        lock.unlock();
      }
    }

    private long batchEnd() {
      return (writesDone + 1) * readsPerWrite;
    }
  }

  private static void log(String message) {
    System.out.println("[bench] " + message);
  }
}

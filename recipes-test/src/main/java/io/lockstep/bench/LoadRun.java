package io.lockstep.bench;

import io.lockstep.testing.Library;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Threads that repeat one locking step for a warm-up period and then a measured one, recording
 * latencies with HdrHistogram. Each step records its own latencies into one of the run's recorders;
 * the run keeps what was recorded during the measured period only.
 */
final class LoadRun {
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);

  /** One thread's repeated work: typically acquire (timed), then release. */
  interface Step {
    void run() throws Exception;
  }

  /**
   * What the measured period recorded.
   *
   * @param seconds how long it lasted
   * @param histograms one per recorder, in the order given, latencies in nanoseconds
   * @param traffic the ZooKeeper traffic during the period (not settled: approximate at the edges)
   */
  record Outcome(double seconds, List<Histogram> histograms, ServerCounters.Traffic traffic) {
    /** Operations recorded in all histograms together. */
    long operations() {
      return histograms.stream().mapToLong(Histogram::getTotalCount).sum();
    }

    /** Operations per second. */
    double perSecond() {
      return operations() / seconds;
    }

    /** The histograms merged. */
    Histogram merged() {
      Histogram all = newHistogram();
      histograms.forEach(all::add);
      return all;
    }

    /** Requests per recorded operation. */
    double requestsPerOperation() {
      return (double) traffic.requests() / Math.max(1, operations());
    }
  }

  private LoadRun() {}

  /** A recorder for latencies in nanoseconds, up to a minute, to 3 significant digits. */
  static Recorder newRecorder() {
    return new Recorder(TimeUnit.MINUTES.toNanos(1), 3);
  }

  static Histogram newHistogram() {
    return new Histogram(TimeUnit.MINUTES.toNanos(1), 3);
  }

  /**
   * Runs {@code threads} threads for the suite's warm-up and measured periods (see {@link #run})
   * and returns the measured point.
   */
  static LoadResult measure(
      ServerProbe probe,
      SuiteSettings settings,
      Library library,
      int threads,
      List<Recorder> recorders,
      IntFunction<Step> steps)
      throws Exception {
    Outcome outcome =
        run(probe, threads, settings.loadWarmup(), settings.loadMeasured(), recorders, steps);
    return LoadResult.of(library, threads, outcome);
  }

  /**
   * Runs {@code threads} threads, thread {@code i} repeating {@code steps.apply(i)}, for {@code
   * warmup} and then {@code measured}.
   *
   * @throws Exception the first exception a step threw, after all threads stopped
   */
  static Outcome run(
      ServerProbe probe,
      int threads,
      Duration warmup,
      Duration measured,
      List<Recorder> recorders,
      IntFunction<Step> steps)
      throws Exception {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Exception> failure = new AtomicReference<>();
    CountDownLatch failed = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      Step step = steps.apply(i);
      Thread worker =
          new Thread(
              () -> {
                try {
                  while (!stop.get()) {
                    step.run();
                  }
                } catch (Exception e) {
                  failure.compareAndSet(null, e);
                  stop.set(true);
                  failed.countDown();
                }
              },
              "load-" + i);
      workers.add(worker);
    }
    workers.forEach(Thread::start);
    Outcome outcome = null;
    try {
      if (!failed.await(warmup.toNanos(), TimeUnit.NANOSECONDS)) {
        recorders.forEach(Recorder::getIntervalHistogram); // drop the warm-up
        ServerCounters before = probe.read();
        long start = System.nanoTime();
        if (!failed.await(measured.toNanos(), TimeUnit.NANOSECONDS)) {
          List<Histogram> histograms = new ArrayList<>();
          recorders.forEach(r -> histograms.add(r.getIntervalHistogram()));
          double seconds = (System.nanoTime() - start) / 1e9;
          outcome = new Outcome(seconds, histograms, probe.read().since(before));
        }
      }
    } finally {
      stop.set(true);
      for (Thread worker : workers) {
        worker.join(STOP_TIMEOUT.toMillis());
      }
    }
    for (Thread worker : workers) {
      if (worker.isAlive()) {
        throw new IllegalStateException(worker.getName() + " did not stop within " + STOP_TIMEOUT);
      }
    }
    if (failure.get() != null) {
      throw failure.get();
    }
    return outcome;
  }
}

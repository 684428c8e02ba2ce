package io.lockstep.bench;

import io.lockstep.testing.Library;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The JMH benchmark shape every uncontended benchmark shares: one thread, one client, one lock on a
 * path of its own, and {@code acquire(); release();} as the operation, with the {@code library}
 * (Curator or Lockstep) as a parameter. Subclasses say which lock; see {@link
 * UncontendedLockBenchmark} and {@link MultiLockBenchmark}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public abstract class LockCycleBenchmark {
  /** Whose recipe runs. */
  @Param({"CURATOR", "LOCKSTEP"})
  public Library library;

  private BenchFixture fixture; // set up and torn down by JMH, on the benchmark thread
  private InterProcessLock lock; // the lock of this trial

  /** The lock of this trial, on a fresh path of {@code fixture}'s client. */
  abstract InterProcessLock newLock(BenchFixture fixture) throws Exception;

  /** Connects and builds the lock of this trial. */
  @Setup(Level.Trial)
  public void setUp() throws Exception {
    fixture = BenchFixture.open();
    lock = newLock(fixture);
  }

  /** Closes the client (and the benchmark's own server, if any). */
  @TearDown(Level.Trial)
  public void tearDown() {
    fixture.close();
  }

  /** One uncontended acquire + release. */
  @Benchmark
  public void acquireRelease() throws Exception {
    lock.acquire();
    lock.release();
  }
}

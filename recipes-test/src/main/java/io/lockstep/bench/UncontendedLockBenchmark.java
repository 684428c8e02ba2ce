package io.lockstep.bench;

import io.lockstep.testing.Recipe;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.openjdk.jmh.annotations.Param;

/**
 * Uncontended acquire + release cycles per second of one lock recipe, Curator's class against ours
 * as the {@code library} parameter of the same benchmark.
 *
 * <p><b>Workload.</b> One thread, one client, one lock object on a path nobody else uses, its
 * directories created beforehand as persistent nodes. Each operation is {@code acquire();
 * release();} with nothing in between, so the figure is the recipe's own cost: its ZooKeeper round
 * trips (3 requests for every Lockstep recipe; Curator: 3 for the mutex and each side of the
 * read-write lock, 7 for the semaphore mutex) and the server's fsync of each write. The server is
 * the suite's embedded ZooKeeper (in the suite's JVM; the benchmark runs in a JMH fork), or one of
 * the benchmark's own when run alone. The request and byte counts on the benchmark page come from
 * {@link CycleCost}, not from this benchmark. The suite runs it with JMH's GC profiler ({@link
 * JmhRuns}): the page's bytes allocated per cycle are its {@code gc.alloc.rate.norm}, what the
 * fork's JVM allocated on all its threads (the client's, Curator's and ZooKeeper's code) per cycle.
 *
 * <p><b>Command</b> (from the repository root; prints the JMH results and leaves {@code docs/}
 * alone):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--full --only uncontended"
 * </pre>
 *
 * <p>The whole suite, which also writes {@code docs/benchmarks.md}: {@code mvn -B -Pbench verify
 * -Dbench.args=--full} (or {@code --quick}).
 */
public class UncontendedLockBenchmark extends LockCycleBenchmark {
  /** Which recipe runs. */
  @Param({"MUTEX", "NON_REENTRANT_MUTEX", "READ", "WRITE"})
  public Recipe recipe;

  @Override
  InterProcessLock newLock(BenchFixture fixture) throws Exception {
    return fixture.newLock(library, recipe, 1);
  }
}

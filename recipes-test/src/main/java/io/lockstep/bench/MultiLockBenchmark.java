package io.lockstep.bench;

import io.lockstep.testing.Recipe;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.openjdk.jmh.annotations.Param;

/**
 * Uncontended acquire + release cycles per second of a multi-lock over K paths: Curator's {@code
 * InterProcessMultiLock} (of {@code InterProcessMutex}es) against {@code MultiMutex}, as the {@code
 * library} parameter of the same benchmark, for K = {@code paths} = 1, 4, 8 and 16.
 *
 * <p><b>Workload.</b> One thread, one client, one multi-lock object over K sibling paths nobody
 * else uses, created beforehand as persistent nodes. Each operation is {@code acquire();
 * release();}. Curator takes the paths one after the other, 3 requests each; {@code MultiMutex}
 * sends one transaction of creates, one read-only transaction of child lists and one transaction of
 * deletes, 3 requests whatever K. The server is the suite's embedded ZooKeeper, or one of the
 * benchmark's own when run alone.
 *
 * <p><b>Command</b> (from the repository root; prints the JMH results and leaves {@code docs/}
 * alone):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--full --only multi"
 * </pre>
 */
public class MultiLockBenchmark extends LockCycleBenchmark {
  /** K, the number of paths locked together. */
  @Param({"1", "4", "8", "16"})
  public int paths;

  @Override
  InterProcessLock newLock(BenchFixture fixture) throws Exception {
    return fixture.newLock(library, Recipe.MULTI, paths);
  }
}

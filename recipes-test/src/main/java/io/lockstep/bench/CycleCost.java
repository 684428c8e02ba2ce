package io.lockstep.bench;

import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;

/**
 * The ZooKeeper traffic of uncontended acquire + release cycles, as the server counted it. Request
 * counts are deterministic: the benchmark page reports them and a test asserts them, both through
 * {@link #measure}.
 *
 * @param cycles the cycles counted
 * @param requests requests the server received during them
 * @param writes write requests among them (each waits for the server's fsync)
 * @param responseBytes bytes the server sent during them
 */
public record CycleCost(int cycles, long requests, long writes, long responseBytes) {

  /** Requests per cycle. */
  public double requestsPerCycle() {
    return (double) requests / cycles;
  }

  /** Write requests per cycle. */
  public double writesPerCycle() {
    return (double) writes / cycles;
  }

  /** Response bytes per cycle. */
  public double responseBytesPerCycle() {
    return (double) responseBytes / cycles;
  }

  /**
   * Counts {@code cycles} uncontended cycles of a new lock of {@code recipe} on {@code path}, made
   * with {@code client}. The lock's directories are created first as persistent nodes (so that no
   * container is reaped and recreated in between), and one cycle runs before counting starts (so
   * that what a lock object does once, such as Curator's semaphore creating its directories, is
   * left out). Nothing else may use the server meanwhile: the counters are server-wide.
   */
  public static CycleCost measure(
      ServerProbe probe,
      CuratorFramework client,
      Library library,
      Recipe recipe,
      String path,
      int paths,
      int cycles)
      throws Exception {
    BenchZooKeeper.createDirectories(client, recipe.directories(library, path, paths));
    return measure(probe, recipe.newLock(library, client, path, paths), cycles);
  }

  /**
   * Counts {@code cycles} acquire + release cycles of {@code lock}, after one cycle not counted.
   */
  public static CycleCost measure(ServerProbe probe, InterProcessLock lock, int cycles)
      throws Exception {
    if (cycles < 1) {
      throw new IllegalArgumentException("cycles must be positive: " + cycles);
    }
    cycle(lock);
    ServerCounters before = probe.settled();
    for (int i = 0; i < cycles; i++) {
      cycle(lock);
    }
    ServerCounters.Traffic traffic = probe.settled().since(before);
    return new CycleCost(cycles, traffic.requests(), traffic.writes(), traffic.responseBytes());
  }

  private static void cycle(InterProcessLock lock) throws Exception {
    lock.acquire();
    lock.release();
  }
}

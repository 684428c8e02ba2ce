package io.lockstep.bench;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.testing.Library;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import org.HdrHistogram.Recorder;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.utils.ZKPaths;

/**
 * The counting semaphore, Lockstep's {@code CountingSemaphore} against Curator's {@code
 * InterProcessSemaphoreV2}, on the same server with the same {@code maxLeases} (part of the {@code
 * semaphore-election} section, with {@link ElectionScenario}).
 *
 * <p><b>Uncontended.</b> One semaphore object on one client takes a lease and gives it back at
 * once, in a loop: the server counts the requests of {@code countedCycles} cycles after one not
 * counted ({@link #count}, settled at both ends, exact), then a timed loop on one thread measures
 * cycles per second and the time of a whole cycle over the suite's load periods ({@link
 * #uncontended}).
 *
 * <p><b>Contention.</b> C clients with T threads each, every thread with a semaphore object of its
 * own on the one path, take a lease and give it back at once, in a loop, for the suite's load
 * periods ({@link #contended}): leases per second, the acquire latency (p50, p99), and from {@code
 * mntr} the requests and watch events per lease (not settled at the edges, as in the contention
 * section). The threads count the leases they hold between acquire and return: the most held at
 * once is reported, and must never exceed {@code maxLeases}.
 *
 * <p>Both directories, {@code leases} and {@code locks}, are created up front as persistent nodes:
 * each recipe creates them as containers, which the server would reap between cycles.
 *
 * <p><b>Command</b> (from the repository root; {@code --update} replaces the section's block of
 * {@code docs/benchmarks.md} and nothing else):
 *
 * <pre>
 * mvn -B -Pbench verify -DskipTests -Dbench.args="--full --only semaphore-election --update"
 * </pre>
 */
final class SemaphoreScenario {
  private SemaphoreScenario() {}

  /** One side's semaphore object. */
  @FunctionalInterface
  interface Semaphore {
    /** Waits for a lease; closing the result gives it back. */
    AutoCloseable acquire() throws Exception;
  }

  /** How the leases were asked for: one uncontended thread, or C clients × T threads. */
  enum Load {
    UNCONTENDED,
    CONTENDED
  }

  /**
   * A measured point.
   *
   * @param library whose semaphore
   * @param load uncontended or contended
   * @param clients C, the clients (sessions)
   * @param threadsPerClient T, the threads of each client
   * @param maxLeases the semaphore's {@code maxLeases}
   * @param result leases (or cycles) per second, latency, requests per lease
   * @param watchesPerLease watch events the server sent per lease
   * @param mostHeld the most leases the threads held at once
   */
  record Point(
      Library library,
      Load load,
      int clients,
      int threadsPerClient,
      int maxLeases,
      LoadResult result,
      double watchesPerLease,
      int mostHeld) {}

  /** The class each library's semaphore is, for tables: "`InterProcessSemaphoreV2`". */
  static String className(Library library) {
    return library == Library.CURATOR ? "`InterProcessSemaphoreV2`" : "`CountingSemaphore`";
  }

  /** A new semaphore object of {@code library}; nothing is sent until its first acquire. */
  static Semaphore newSemaphore(
      Library library, CuratorFramework client, String path, int maxLeases) {
    if (library == Library.CURATOR) {
      InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, maxLeases);
      return () -> {
        Lease lease = semaphore.acquire();
        return lease::close;
      };
    }
    CountingSemaphore semaphore = new CountingSemaphore(client, path, maxLeases);
    return () -> {
      LockHold hold = semaphore.acquire();
      return hold::close;
    };
  }

  /** The directories both recipes keep their nodes in, created up front as persistent nodes. */
  static void createDirectories(CuratorFramework client, String path) throws Exception {
    BenchZooKeeper.createDirectories(
        client, List.of(ZKPaths.makePath(path, "leases"), ZKPaths.makePath(path, "locks")));
  }

  /**
   * Counts {@code cycles} uncontended acquire + return cycles of a new semaphore of {@code library}
   * on {@code path}, after one not counted. Nothing else may use the server meanwhile.
   */
  static CycleCost count(
      ServerProbe probe,
      CuratorFramework client,
      Library library,
      String path,
      int maxLeases,
      int cycles)
      throws Exception {
    if (cycles < 1) {
      throw new IllegalArgumentException("cycles must be positive: " + cycles);
    }
    createDirectories(client, path);
    Semaphore semaphore = newSemaphore(library, client, path, maxLeases);
    semaphore.acquire().close();
    ServerCounters before = probe.settled();
    for (int i = 0; i < cycles; i++) {
      semaphore.acquire().close();
    }
    ServerCounters.Traffic traffic = probe.settled().since(before);
    return new CycleCost(cycles, traffic.requests(), traffic.writes(), traffic.responseBytes());
  }

  /** Uncontended cycles on one thread and one client: cycles per second, a cycle's latency. */
  static Point uncontended(
      ServerProbe probe, String connect, SuiteSettings settings, Library library) throws Exception {
    return run(probe, connect, settings, library, Load.UNCONTENDED, 1, 1);
  }

  /** {@code clients} × {@code threadsPerClient} threads taking and returning leases. */
  static Point contended(
      ServerProbe probe,
      String connect,
      SuiteSettings settings,
      Library library,
      int clients,
      int threadsPerClient)
      throws Exception {
    return run(probe, connect, settings, library, Load.CONTENDED, clients, threadsPerClient);
  }

  private static Point run(
      ServerProbe probe,
      String connect,
      SuiteSettings settings,
      Library library,
      Load load,
      int clientCount,
      int threadsPerClient)
      throws Exception {
    int maxLeases = settings.semaphoreMaxLeases();
    int threads = clientCount * threadsPerClient;
    String path = Paths.unique("semaphore-" + load.name().toLowerCase(Locale.ROOT));
    try (Clients clients = new Clients(connect, clientCount)) {
      createDirectories(clients.get(0), path);
      List<Semaphore> semaphores = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        semaphores.add(newSemaphore(library, clients.get(i), path, maxLeases));
      }
      Recorder recorder = LoadRun.newRecorder();
      AtomicInteger held = new AtomicInteger();
      AtomicInteger mostHeld = new AtomicInteger();
      boolean wholeCycle = load == Load.UNCONTENDED;
      LoadRun.Outcome outcome =
          LoadRun.run(
              probe,
              threads,
              settings.loadWarmup(),
              settings.loadMeasured(),
              List.of(recorder),
              i ->
                  () -> {
                    Semaphore semaphore = semaphores.get(i);
                    long start = System.nanoTime();
                    AutoCloseable lease = semaphore.acquire();
                    if (!wholeCycle) {
                      recorder.recordValue(System.nanoTime() - start);
                    }
                    mostHeld.accumulateAndGet(held.incrementAndGet(), Math::max);
                    held.decrementAndGet();
                    lease.close();
                    if (wholeCycle) {
                      recorder.recordValue(System.nanoTime() - start);
                    }
                  });
      if (outcome == null) {
        throw new IllegalStateException("the semaphore run stopped early");
      }
      if (mostHeld.get() > maxLeases) {
        throw new IllegalStateException(
            library.label()
                + " handed out "
                + mostHeld.get()
                + " leases at once, max "
                + maxLeases);
      }
      double leases = Math.max(1, outcome.operations());
      ServerCounters.Traffic traffic = outcome.traffic();
      SectionRuns.log(
          String.format(
              Locale.ROOT,
              "semaphore %s %s: watch events per lease %.2f deleted, %.2f children, %.2f changed",
              load.name().toLowerCase(Locale.ROOT),
              library.label(),
              traffic.deletedWatchesFired() / leases,
              traffic.childWatchesFired() / leases,
              traffic.changedWatchesFired() / leases));
      return new Point(
          library,
          load,
          clientCount,
          threadsPerClient,
          maxLeases,
          LoadResult.of(library, threads, outcome),
          traffic.watchesFired() / leases,
          mostHeld.get());
    }
  }
}

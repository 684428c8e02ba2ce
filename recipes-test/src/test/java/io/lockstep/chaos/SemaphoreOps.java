package io.lockstep.chaos;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.ExclusionChecker;
import io.lockstep.testing.LockPart;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;

/**
 * A worker's semaphore operations: leases of one {@link CountingSemaphore} of {@value #MAX_LEASES}
 * leases, built on the client's current Curator client, taken with a random budget ({@code
 * tryAcquire}), two at once sometimes ({@code acquire(2, budget)}), untimed now and then, held
 * briefly (one hold in ten long enough for faults to catch it) and given back.
 *
 * <p>Each lease is a hold of {@link #PATH} in the run's {@link ExclusionChecker}, which counts that
 * path instead of excluding on it: at no moment may more than {@value #MAX_LEASES} leases count. A
 * lease has no listener; its holder reads its state every few milliseconds while it holds, and the
 * hold stops counting from the first read of {@code AT_RISK} or {@code LOST} (and counts again on
 * {@code HELD}). A lease is told {@code AT_RISK} when its connection is suspended, seconds before
 * its session can expire, so the reads are in time.
 */
final class SemaphoreOps {
  static final String PATH = "/chaos/sem";
  static final int MAX_LEASES = 2;

  private static final List<LockPart> PARTS = List.of(LockPart.mutex(PATH));
  private static final long POLL_MS = 5;

  /** A lease held, its hold in the history, and the state last read. */
  private static final class Lease {
    final LockHold hold;
    final ExclusionChecker.Hold recorded;
    LockState last;

    Lease(LockHold hold, ExclusionChecker.Hold recorded, LockState last) {
      this.hold = hold;
      this.recorded = recorded;
      this.last = last;
    }
  }

  private final ChaosRun run;
  private final ChaosRun.Client client;
  private final int worker;
  private final Random random;
  private final Workload workload;
  private final String holderName;

  SemaphoreOps(
      ChaosRun run,
      ChaosRun.Client client,
      int worker,
      Random random,
      Workload workload,
      String holderName) {
    this.run = run;
    this.client = client;
    this.worker = worker;
    this.random = random;
    this.workload = workload;
    this.holderName = holderName + " (lease)";
  }

  /** One request: a lease (or two), held briefly and given back, or a timeout, or a failure. */
  void operate() throws InterruptedException {
    CuratorFramework curator = client.curator();
    CountingSemaphore semaphore = new CountingSemaphore(curator, PATH, MAX_LEASES);
    int pick = random.nextInt(10);
    boolean untimed = pick == 0;
    boolean pair = pick == 1 || pick == 2;
    long budgetMs = untimed ? -1 : 100 + random.nextInt(3_000);
    run.tally.semRequests.increment();
    if (pair) {
      run.tally.semPairRequests.increment();
    }
    List<LockHold> leases;
    long start = System.nanoTime();
    client.acquiring.incrementAndGet();
    try {
      workload.armLostAnswer();
      if (untimed) {
        leases = List.of(semaphore.acquire());
      } else if (pair) {
        leases = semaphore.tryHold(2, Duration.ofMillis(budgetMs));
      } else {
        leases = semaphore.tryHold(Duration.ofMillis(budgetMs)).map(List::of).orElse(List.of());
      }
    } catch (LockException e) {
      run.tally.semFailed.increment();
      workload.checkBound("semaphore acquire (failed)", start, budgetMs);
      return;
    } finally {
      client.acquiring.decrementAndGet();
    }
    workload.checkBound("semaphore acquire", start, budgetMs);
    if (leases.isEmpty()) {
      run.tally.semTimedOut.increment();
      return;
    }
    if (leases.size() != (pair ? 2 : 1)) {
      run.tally.violation(holderName + " asked for " + (pair ? 2 : 1) + " got " + leases.size());
    }
    run.tally.semLeases.add(leases.size());
    hold(curator, leases);
  }

  private void hold(CuratorFramework curator, List<LockHold> granted) throws InterruptedException {
    // 0 if the schedule closed the client since the grant: such a hold never counts
    long session = Sessions.id(curator);
    List<Lease> leases = new ArrayList<>();
    client.holding.add(worker);
    boolean slow = random.nextInt(10) == 0;
    if (slow) {
      client.slowHolds.add(worker);
    }
    try {
      for (LockHold lease : granted) {
        long token;
        try {
          token = lease.fencingToken();
        } catch (RuntimeException lostAlready) {
          token = 0;
        }
        LockState state = lease.state();
        boolean counting = session != 0 && token != 0 && state == LockState.HELD;
        leases.add(
            new Lease(
                lease, run.checker.begin(holderName, PARTS, token, session, counting), state));
        count(state);
      }
      long until =
          System.nanoTime()
              + TimeUnit.MILLISECONDS.toNanos(
                  slow ? 300 + random.nextInt(2_000) : random.nextInt(30));
      while (System.nanoTime() < until) {
        TimeUnit.MILLISECONDS.sleep(POLL_MS);
        leases.forEach(this::observe);
      }
    } finally {
      leases.forEach(lease -> run.checker.end(lease.recorded));
      client.slowHolds.remove(worker);
      client.holding.remove(worker);
      granted.forEach(this::giveBack);
    }
  }

  /** Keeps the lease's hold in the history in step with the lease's state. */
  private void observe(Lease lease) {
    LockState state = lease.hold.state();
    if (state == lease.last) {
      return;
    }
    lease.last = state;
    count(state);
    if (state == LockState.HELD) {
      run.checker.resume(lease.recorded);
    } else {
      run.checker.pause(lease.recorded);
    }
  }

  private void count(LockState state) {
    if (state == LockState.AT_RISK) {
      run.tally.semAtRisk.increment();
    } else if (state == LockState.LOST) {
      run.tally.semLost.increment();
    }
  }

  private void giveBack(LockHold lease) {
    long start = System.nanoTime();
    try {
      lease.close();
    } catch (RuntimeException e) {
      run.tally.violation(holderName + " could not give back " + lease + ": " + e);
    }
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    if (tookMs > Workload.RELEASE_WATCHDOG_MS) {
      run.tally.violation(holderName + " giving back a lease took " + tookMs + " ms");
    }
  }
}

package io.lockstep.chaos;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockStateChange;
import io.lockstep.testing.ExclusionChecker;
import io.lockstep.testing.FencedStore;
import io.lockstep.testing.Guard;
import io.lockstep.testing.HoldListener;
import io.lockstep.testing.Library;
import io.lockstep.testing.LockPart;
import io.lockstep.testing.Recipe;
import io.lockstep.testkit.internal.Sessions;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.api.transaction.OperationType;

/**
 * One worker of a chaos run: takes random locks of every recipe of the catalogue with random
 * budgets (and, one operation in eight, leases of the semaphore: {@link SemaphoreOps}), writes
 * under them with fencing tokens and ownership checks, and records what happened. Each lock is
 * built on the client's current Curator client, which the schedule may close under it (then acquire
 * fails with {@link LockException} and a hold is lost). Half of the mutexes and non-reentrant
 * mutexes hand off locally, on one path, with a small random bound (2 to 4): the client's workers
 * share one place in the queue there, and its handoffs, fairness reads and fence writes run under
 * the faults.
 */
final class Workload implements Runnable {
  private static final List<String> MUTEX_PATHS = List.of("/chaos/m0", "/chaos/m1", "/chaos/m2");
  private static final List<String> RW_PATHS = List.of("/chaos/rw0", "/chaos/rw1");

  /** Longest an untimed acquire may take before it counts as a hang. */
  static final long UNTIMED_WATCHDOG_MS = 90_000;

  /** What a timed acquire may take beyond its budget: one attempt under a lost connection. */
  static final long GRACE_MS = ChaosRun.CONNECTION_TIMEOUT_MS + 2_000;

  /** Longest a release may take (its delete is retried, then handed to the background). */
  static final long RELEASE_WATCHDOG_MS = 30_000;

  /**
   * The path of every local-handoff lock, so that a client's workers meet on its place there (and
   * contend with plain mutexes and multi-locks, which take it too).
   */
  private static final String LOCAL_HANDOFF_PATH = MUTEX_PATHS.get(0);

  /** Marks the holder name of a hold of a local-handoff lock in the history. */
  private static final String LOCAL_HANDOFF = " (local handoff)";

  /**
   * A lock chosen for one operation, the client it was built on, its hold in the history, and
   * whether it hands off locally.
   */
  private record Choice(
      Guard guard, CuratorFramework curator, HoldListener holds, boolean localHandoff) {
    FencedLock lock() {
      return guard.fencedLock();
    }
  }

  private final ChaosRun run;
  private final ChaosRun.Client client;
  private final int worker;
  private final Random random;
  private final String holderName;
  private final SemaphoreOps semaphore;

  Workload(ChaosRun run, ChaosRun.Client client, int worker, Random random) {
    this.run = run;
    this.client = client;
    this.worker = worker;
    this.random = random;
    this.holderName = "client" + client.id + "/worker" + worker;
    this.semaphore = new SemaphoreOps(run, client, worker, random, this, holderName);
  }

  static List<String> allLockPaths() {
    List<String> all = new ArrayList<>(MUTEX_PATHS);
    all.addAll(RW_PATHS);
    return all;
  }

  /** Whether {@code holder}, as recorded in the history, held a local-handoff lock. */
  static boolean isLocalHandoff(String holder) {
    return holder.endsWith(LOCAL_HANDOFF);
  }

  /** The ZooKeeper node written under the lock at {@code lockPath}. */
  static String dataNode(String lockPath) {
    return "/chaos-data" + lockPath.substring("/chaos".length());
  }

  @Override
  public void run() {
    while (!run.stopping.get()) {
      try {
        if (random.nextInt(8) == 0) { // one operation in eight takes leases of the semaphore
          semaphore.operate();
          TimeUnit.MILLISECONDS.sleep(random.nextInt(20));
          continue;
        }
        Choice choice;
        try {
          choice = choose();
        } catch (LockException closedUnderUs) {
          // A multi-lock checks its transaction's size with the client, which fails once the
          // schedule has closed it: a failure of this operation, like an acquire's.
          run.tally.failed.increment();
          TimeUnit.MILLISECONDS.sleep(random.nextInt(20));
          continue;
        }
        operate(choice);
        TimeUnit.MILLISECONDS.sleep(random.nextInt(20)); // pacing between operations
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        run.tally.violation(holderName + " failed unexpectedly: " + e);
      }
    }
  }

  /** A random recipe of the catalogue on random paths, through the client's current client. */
  private Choice choose() {
    CuratorFramework curator = client.curator();
    Recipe recipe = Recipe.values()[random.nextInt(Recipe.values().length)];
    boolean localHandoff =
        (recipe == Recipe.MUTEX || recipe == Recipe.NON_REENTRANT_MUTEX) && random.nextBoolean();
    String mutexPath =
        localHandoff ? LOCAL_HANDOFF_PATH : MUTEX_PATHS.get(random.nextInt(MUTEX_PATHS.size()));
    String rwPath = RW_PATHS.get(random.nextInt(RW_PATHS.size()));
    List<LockPart> parts =
        switch (recipe) {
          case MUTEX, NON_REENTRANT_MUTEX -> List.of(new LockPart(recipe, mutexPath));
          case READ, WRITE -> List.of(new LockPart(recipe, rwPath));
          case MULTI -> {
            List<String> paths = new ArrayList<>(MUTEX_PATHS);
            Collections.shuffle(paths, random);
            yield paths.subList(0, 2 + random.nextInt(2)).stream().map(LockPart::mutex).toList();
          }
          case MULTI_MIXED -> List.of(LockPart.mutex(mutexPath), LockPart.write(rwPath));
        };
    Guard guard;
    if (recipe.isMulti()) {
      guard = Guard.multi(Library.LOCKSTEP, curator, parts);
    } else if (localHandoff) {
      guard = Guard.localHandoff(curator, parts.get(0), 2 + random.nextInt(3));
    } else {
      guard = Guard.of(Library.LOCKSTEP, curator, parts.get(0));
    }
    HoldListener holds = new HoldListener(run.checker);
    guard.addStateListener(this::count);
    guard.addStateListener(holds);
    return new Choice(guard, curator, holds, localHandoff);
  }

  private void count(LockStateChange change) {
    if (change.state() == LockState.AT_RISK) {
      run.tally.atRisk.increment();
    } else if (change.state() == LockState.LOST) {
      run.tally.lost.increment();
    }
  }

  private void operate(Choice choice) throws InterruptedException {
    long budgetMs = random.nextInt(10) < 3 ? -1 : 300 + random.nextInt(4_700);
    long start = System.nanoTime();
    boolean acquired;
    client.acquiring.incrementAndGet();
    try {
      armLostAnswer();
      if (budgetMs < 0) {
        choice.lock().acquire();
        acquired = true;
      } else {
        acquired = choice.lock().acquire(budgetMs, TimeUnit.MILLISECONDS);
      }
    } catch (LockException e) {
      run.tally.failed.increment();
      if (choice.localHandoff()) {
        run.tally.localHandoffFailed.increment();
      }
      checkBound("acquire (failed)", start, budgetMs);
      return;
    } finally {
      client.acquiring.decrementAndGet();
    }
    checkBound("acquire", start, budgetMs);
    if (!acquired) {
      run.tally.timedOut.increment();
      if (choice.localHandoff()) {
        run.tally.localHandoffTimedOut.increment();
      }
      return;
    }
    run.tally.acquired.increment();
    if (choice.localHandoff()) {
      run.tally.localHandoffAcquired.increment();
    }
    hold(choice);
  }

  /**
   * If the schedule asked for it, loses the answer to the client's next request, right before this
   * worker's acquire sends its create: a create the server applies while the client never hears.
   * The request stays pending while the client has no connection to arm it on (it is between
   * servers).
   */
  void armLostAnswer() {
    if (client.loseNextAnswer.get()
        && run.faults().loseNextResponse(client.links, 100 + random.nextInt(900))
        && client.loseNextAnswer.compareAndSet(true, false)) {
      run.tally.lostAnswers.increment();
    }
  }

  private void hold(Choice choice) throws InterruptedException {
    List<LockPart> parts = choice.guard().parts();
    boolean exclusive = parts.stream().noneMatch(LockPart::shared);
    long token;
    try {
      token = choice.lock().fencingToken();
    } catch (LockOwnershipLostException lostAlready) {
      release(choice);
      return;
    }
    // 0 if the schedule closed the client since the grant: such a hold never counts
    long session = Sessions.id(choice.curator());
    String holder = choice.localHandoff() ? holderName + LOCAL_HANDOFF : holderName;
    ExclusionChecker.Hold hold = choice.holds().begin(holder, parts, token, session, session != 0);
    client.holding.add(worker);
    try {
      // Most guarded work is short; one hold in ten is slow, so faults catch holders mid-work.
      boolean slow = random.nextInt(10) == 0;
      if (slow) {
        client.slowHolds.add(worker);
      }
      int steps = slow ? 2 + random.nextInt(8) : 2;
      for (int step = 0; step < steps; step++) {
        if (exclusive) {
          writeFenced(choice, hold, token);
        }
        TimeUnit.MILLISECONDS.sleep(slow ? 100 + random.nextInt(300) : random.nextInt(8));
      }
    } finally {
      choice.holds().end();
      client.slowHolds.remove(worker);
      client.holding.remove(worker);
      release(choice);
    }
  }

  /** Writes every path held to the fenced resource, then to ZooKeeper under ownership checks. */
  private void writeFenced(Choice choice, ExclusionChecker.Hold hold, long token) {
    List<LockPart> parts = choice.guard().parts();
    for (LockPart part : parts) {
      if (run.fenced.write(part.path(), token)) {
        run.tally.fencedWritesAccepted.increment();
      } else {
        run.tally.fencedWritesRefused.increment();
        run.refusals.add(
            new ChaosRun.Refusal(
                part.path(), token, System.nanoTime(), run.checker.isCounting(hold)));
      }
    }
    try {
      CuratorFramework curator = choice.curator();
      List<CuratorOp> writes = new ArrayList<>();
      for (LockPart part : parts) {
        writes.add(curator.transactionOp().setData().forPath(dataNode(part.path()), bytes(token)));
      }
      FencedStore.Committed committed = FencedStore.prepare(choice.guard(), writes).commit(curator);
      switch (committed.outcome()) {
        case COMMITTED -> {
          for (CuratorTransactionResult result : committed.results()) {
            if (result.getType() == OperationType.SET_DATA) {
              run.commits.add(
                  new ChaosRun.Commit(
                      result.getForPath(), token, result.getResultStat().getMzxid()));
            }
          }
          run.tally.zkWritesCommitted.increment();
        }
        // SKIPPED: the lock knew it was lost, nothing sent; REFUSED: an ownership check failed
        case SKIPPED, REFUSED -> run.tally.zkWritesRefused.increment();
      }
    } catch (Exception e) {
      run.tally.zkWritesUnsure.increment(); // connection lost, or the client closed
    }
  }

  private void release(Choice choice) {
    long start = System.nanoTime();
    try {
      choice.lock().release();
      run.tally.released.increment();
    } catch (RuntimeException e) {
      run.tally.violation(holderName + " could not release " + choice.lock() + ": " + e);
    }
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    if (tookMs > RELEASE_WATCHDOG_MS) {
      run.tally.violation(holderName + " release took " + tookMs + " ms");
    }
  }

  void checkBound(String what, long start, long budgetMs) {
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    long limit = budgetMs < 0 ? UNTIMED_WATCHDOG_MS : budgetMs + GRACE_MS;
    if (tookMs > limit) {
      run.tally.violation(
          holderName
              + " "
              + what
              + " took "
              + tookMs
              + " ms, limit "
              + limit
              + " ms (budget "
              + budgetMs
              + ")");
    }
  }

  private static byte[] bytes(long token) {
    return ByteBuffer.allocate(Long.BYTES).putLong(token).array();
  }
}

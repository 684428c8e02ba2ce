package io.lockstep.chaos;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockStateChange;
import io.lockstep.recipes.locks.MultiMutex;
import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
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
import org.apache.zookeeper.KeeperException;

/**
 * One worker of a chaos run: takes random locks of every recipe with random budgets, writes under
 * them with fencing tokens and ownership checks, and records what happened.
 */
final class Workload implements Runnable {
  private static final List<String> MUTEX_PATHS = List.of("/chaos/m0", "/chaos/m1", "/chaos/m2");
  private static final List<String> RW_PATHS = List.of("/chaos/rw0", "/chaos/rw1");

  /** Longest an untimed acquire may take before it counts as a hang. */
  private static final long UNTIMED_WATCHDOG_MS = 90_000;

  /** What a timed acquire may take beyond its budget: one attempt under a lost connection. */
  private static final long GRACE_MS = ChaosRun.CONNECTION_TIMEOUT_MS + 2_000;

  /** Longest a release may take (its delete is retried, then handed to the background). */
  private static final long RELEASE_WATCHDOG_MS = 30_000;

  private enum Op {
    MUTEX,
    NON_REENTRANT,
    READ,
    WRITE,
    MULTI,
    MULTI_MIXED
  }

  /** A lock chosen for one operation, with the paths it covers and how. */
  private record Choice(FencedLock lock, List<String> exclusive, List<String> shared) {}

  private final ChaosRun run;
  private final ChaosRun.Client client;
  private final int worker;
  private final Random random;
  private final String holderName;
  private volatile History.Hold current; // written by this worker, read by listeners and faults

  Workload(ChaosRun run, ChaosRun.Client client, int worker, Random random) {
    this.run = run;
    this.client = client;
    this.worker = worker;
    this.random = random;
    this.holderName = "client" + client.id + "/worker" + worker;
  }

  static List<String> allLockPaths() {
    List<String> all = new ArrayList<>(MUTEX_PATHS);
    all.addAll(RW_PATHS);
    return all;
  }

  /** The ZooKeeper node written under the lock at {@code lockPath}. */
  static String dataNode(String lockPath) {
    return "/chaos-data" + lockPath.substring("/chaos".length());
  }

  @Override
  public void run() {
    while (!run.stopping.get()) {
      try {
        operate(choose());
        TimeUnit.MILLISECONDS.sleep(random.nextInt(20)); // pacing between operations
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        run.tally.violation(holderName + " failed unexpectedly: " + e);
      }
    }
  }

  private Choice choose() {
    CuratorFramework curator = client.curator;
    Op op = Op.values()[random.nextInt(Op.values().length)];
    String mutexPath = MUTEX_PATHS.get(random.nextInt(MUTEX_PATHS.size()));
    String rwPath = RW_PATHS.get(random.nextInt(RW_PATHS.size()));
    switch (op) {
      case MUTEX:
        return listened(
            new Choice(new ReentrantMutex(curator, mutexPath), List.of(mutexPath), List.of()));
      case NON_REENTRANT:
        return listened(
            new Choice(new NonReentrantMutex(curator, mutexPath), List.of(mutexPath), List.of()));
      case READ:
        return listened(
            new Choice(new ReadWriteMutex(curator, rwPath).readLock(), List.of(), List.of(rwPath)));
      case WRITE:
        return listened(
            new Choice(
                new ReadWriteMutex(curator, rwPath).writeLock(), List.of(rwPath), List.of()));
      case MULTI:
        List<String> paths = new ArrayList<>(MUTEX_PATHS);
        Collections.shuffle(paths, random);
        paths = paths.subList(0, 2 + random.nextInt(2));
        return listened(new Choice(new MultiMutex(curator, paths), paths, List.of()));
      case MULTI_MIXED:
      default:
        MultiMutex mixed = MultiMutex.builder(curator).mutex(mutexPath).write(rwPath).build();
        return listened(new Choice(mixed, List.of(mutexPath, rwPath), List.of()));
    }
  }

  private Choice listened(Choice choice) {
    choice.lock().getStateListenable().addListener(this::onStateChanged);
    return choice;
  }

  private void onStateChanged(LockStateChange change) {
    History.Hold hold = current;
    if (change.state() == LockState.AT_RISK) {
      run.tally.atRisk.increment();
    } else if (change.state() == LockState.LOST) {
      run.tally.lost.increment();
    }
    if (hold == null || hold.token() != change.fencingToken()) {
      return;
    }
    if (change.state() == LockState.AT_RISK || change.state() == LockState.LOST) {
      run.history.pause(hold);
    } else if (change.state() == LockState.HELD) {
      run.history.resume(hold);
    }
  }

  private void operate(Choice choice) throws InterruptedException {
    long budgetMs = random.nextInt(10) < 3 ? -1 : 300 + random.nextInt(4_700);
    long start = System.nanoTime();
    boolean acquired;
    try {
      if (budgetMs < 0) {
        choice.lock().acquire();
        acquired = true;
      } else {
        acquired = choice.lock().acquire(budgetMs, TimeUnit.MILLISECONDS);
      }
    } catch (LockException e) {
      run.tally.failed.increment();
      checkBound("acquire (failed)", start, budgetMs);
      return;
    }
    checkBound("acquire", start, budgetMs);
    if (!acquired) {
      run.tally.timedOut.increment();
      return;
    }
    run.tally.acquired.increment();
    hold(choice);
  }

  private void hold(Choice choice) throws InterruptedException {
    boolean exclusive = !choice.exclusive().isEmpty();
    List<String> paths = exclusive ? choice.exclusive() : choice.shared();
    long token;
    try {
      token = choice.lock().fencingToken();
    } catch (LockOwnershipLostException lostAlready) {
      release(choice);
      return;
    }
    History.Hold hold = run.history.begin(holderName, paths, exclusive, token);
    current = hold;
    client.currentHolds.put(worker, hold);
    try {
      // Most guarded work is short; one hold in ten is slow, so faults catch holders mid-work.
      boolean slow = random.nextInt(10) == 0;
      if (slow) {
        client.slowHolds.add(worker);
      }
      int steps = slow ? 2 + random.nextInt(8) : 2;
      for (int step = 0; step < steps; step++) {
        if (exclusive) {
          writeFenced(choice, paths, token);
        }
        TimeUnit.MILLISECONDS.sleep(slow ? 100 + random.nextInt(300) : random.nextInt(8));
      }
    } finally {
      run.history.pause(hold);
      client.slowHolds.remove(worker);
      client.currentHolds.remove(worker);
      current = null;
      release(choice);
    }
  }

  private void writeFenced(Choice choice, List<String> paths, long token) {
    for (String path : paths) {
      if (run.fenced.write(path, token)) {
        run.tally.fencedWritesAccepted.increment();
      } else {
        run.tally.fencedWritesRefused.increment();
        History.Hold hold = current;
        run.refusals.add(
            new ChaosRun.Refusal(
                path, token, System.nanoTime(), hold != null && run.history.isCounting(hold)));
      }
    }
    List<CuratorOp> ops;
    try {
      ops = new ArrayList<>(choice.lock().ownershipChecks());
      for (String path : paths) {
        ops.add(client.curator.transactionOp().setData().forPath(dataNode(path), bytes(token)));
      }
    } catch (LockOwnershipLostException e) {
      run.tally.zkWritesRefused.increment(); // the lock knows it was lost: nothing sent
      return;
    } catch (Exception e) {
      run.tally.zkWritesUnsure.increment();
      return;
    }
    try {
      for (CuratorTransactionResult result : client.curator.transaction().forOperations(ops)) {
        if (result.getType() == OperationType.SET_DATA) {
          run.commits.add(
              new ChaosRun.Commit(result.getForPath(), token, result.getResultStat().getMzxid()));
        }
      }
      run.tally.zkWritesCommitted.increment();
    } catch (KeeperException.NoNodeException e) {
      run.tally.zkWritesRefused.increment(); // an ownership check found our node gone
    } catch (Exception e) {
      run.tally.zkWritesUnsure.increment();
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

  private void checkBound(String what, long start, long budgetMs) {
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

  /** Ends the current hold now: the harness just expired this client's session. */
  static void expired(ChaosRun.Client client, History history) {
    client.currentHolds.values().forEach(history::pause);
  }
}

package io.lockstep.demo;

import io.lockstep.demo.Bank.Balance;
import io.lockstep.demo.Workload.Instance;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.testing.ExclusionChecker;
import io.lockstep.testing.FencedStore;
import io.lockstep.testing.Guard;
import io.lockstep.testing.HoldListener;
import io.lockstep.testing.Library;
import io.lockstep.testing.LockPart;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.UnaryOperator;
import org.apache.curator.framework.CuratorFramework;

/**
 * The demo's operations on the {@link Bank}, each under its lock (see {@link Workload} for which
 * lock guards what): acquire, record the hold in the exclusion checker, write in a database
 * transaction that admits the lock's fencing token first ({@link Bank#update}), release; and count
 * every outcome in the run's {@link Metrics}. Reads under a read lock count only if the lock's
 * ownership checks still pass in ZooKeeper afterwards.
 */
final class Operations {
  private static final Duration ACQUIRE_TIMEOUT = Duration.ofSeconds(10);

  private final Library library;
  private final Metrics metrics;
  private final ExclusionChecker checker;

  Operations(Library library, Metrics metrics, ExclusionChecker checker) {
    this.library = library;
    this.metrics = metrics;
    this.checker = checker;
  }

  void transfer(Instance instance, Bank bank, Random random) throws Exception {
    int from = random.nextInt(bank.accounts());
    int to = (from + 1 + random.nextInt(bank.accounts() - 1)) % bank.accounts();
    long amount = 1 + random.nextInt(100);
    CuratorFramework client = instance.client();
    underLock(
        Operation.TRANSFER,
        instance,
        multiLock(client, bank.transferParts(from, to)),
        guard ->
            write(
                Operation.TRANSFER,
                guard,
                bank,
                List.of(from, to),
                balances -> {
                  Balance source = balances.get(from);
                  if (source.available() < amount) {
                    return Map.of();
                  }
                  return Map.of(from, source.plus(-amount), to, balances.get(to).plus(amount));
                }));
  }

  /**
   * A multi-lock of this run's library over {@code parts}, listed in random order: safe for {@code
   * MultiMutex}, which enqueues in all of them in one transaction; Curator's takes them in path
   * order whatever the list says ({@link Library#multiLock}).
   */
  private Guard multiLock(CuratorFramework client, List<LockPart> parts) {
    List<LockPart> shuffled = new ArrayList<>(parts);
    Collections.shuffle(shuffled, ThreadLocalRandom.current());
    return Guard.multi(library, client, shuffled);
  }

  void single(Operation operation, Instance instance, Bank bank, int account) throws Exception {
    CuratorFramework client = instance.client();
    underLock(
        operation,
        instance,
        Guard.of(library, client, bank.accountPart(operation, library, account)),
        guard ->
            write(
                operation,
                guard,
                bank,
                List.of(account),
                balances -> {
                  Balance balance = balances.get(account);
                  Balance updated;
                  if (operation == Operation.RESERVE) {
                    long amount =
                        Math.min(balance.available(), 1 + ThreadLocalRandom.current().nextInt(50));
                    updated = balance.reserve(amount);
                  } else {
                    updated = balance.settle();
                  }
                  return updated.equals(balance) ? Map.of() : Map.of(account, updated);
                }));
  }

  /**
   * Reads one account under the read side of its audit lock: no transfer can be half-way through
   * it, so the account must not be overdrawn. The read counts only if the lock was held throughout.
   */
  void balance(Instance instance, Bank bank, int account) throws Exception {
    CuratorFramework client = instance.client();
    underLock(
        Operation.BALANCE,
        instance,
        Guard.of(library, client, bank.balancePart(account)),
        guard -> {
          Balance balance = bank.read(account);
          if (FencedStore.prepare(guard, List.of()).commit(client).outcome()
              != FencedStore.Outcome.COMMITTED) {
            return false;
          }
          if (balance.overdrawn()) {
            metrics.problem(
                String.format("instance %d read account %d overdrawn", instance.id(), account));
          }
          return true;
        });
  }

  void audit(Instance instance, Bank bank) throws Exception {
    CuratorFramework client = instance.client();
    underLock(
        Operation.AUDIT,
        instance,
        multiLock(client, bank.auditParts()),
        guard -> {
          List<Balance> balances = bank.readAll();
          // The reads count only if the read locks were held throughout: commit their checks.
          if (FencedStore.prepare(guard, List.of()).commit(client).outcome()
              != FencedStore.Outcome.COMMITTED) {
            metrics.auditsDiscarded.increment();
            return false;
          }
          long total = balances.stream().mapToLong(Balance::total).sum();
          boolean overdrawn = balances.stream().anyMatch(Balance::overdrawn);
          if (total == bank.expectedTotal() && !overdrawn) {
            metrics.auditsBalanced.increment();
          } else {
            metrics.auditsUnbalanced.increment();
            metrics.problem(
                String.format(
                    "instance %d audited %,d instead of %,d%s",
                    instance.id(),
                    total,
                    bank.expectedTotal(),
                    overdrawn ? " (an account overdrawn)" : ""));
          }
          return true;
        });
  }

  /** The part of an operation done while its locks are held; true if it completed. */
  @FunctionalInterface
  private interface Critical {
    boolean run(Guard guard) throws Exception;
  }

  /**
   * Acquires {@code guard}, runs {@code critical} as a hold recorded in the exclusion checker and
   * releases. The acquire latency is recorded; a timeout is counted, not thrown.
   */
  private void underLock(Operation operation, Instance instance, Guard guard, Critical critical)
      throws Exception {
    Metrics.PerOperation counts = metrics.of(operation);
    HoldListener holds = new HoldListener(checker);
    guard.addStateListener(change -> metrics.heard(change.state()));
    guard.addStateListener(holds);
    long begin = System.nanoTime();
    if (!guard.acquire(ACQUIRE_TIMEOUT)) {
      counts.timeouts.increment();
      return;
    }
    try {
      counts.acquired(System.nanoTime() - begin);
      begin(holds, guard, operation.label() + " by instance " + instance.id(), instance.client());
      boolean completed;
      try {
        completed = critical.run(guard);
      } finally {
        holds.end();
      }
      if (completed) {
        counts.completed.increment();
      }
    } finally {
      guard.release();
    }
  }

  /** Records in the checker the hold {@code guard} has just been granted. */
  static void begin(HoldListener holds, Guard guard, String holder, CuratorFramework client) {
    long session = Sessions.id(client);
    long token;
    try {
      token = guard.fencingToken();
    } catch (LockOwnershipLostException lostAlready) {
      holds.begin(holder, guard.parts(), 0, session, false);
      return;
    }
    holds.begin(holder, guard.parts(), token, session);
  }

  /**
   * A fenced read-modify-write of {@code accounts} ({@link Bank#update}) with the guard's token, 0
   * for a Curator lock; counts what became of it. True if the operation completed (written or
   * declined).
   */
  private boolean write(
      Operation operation,
      Guard guard,
      Bank bank,
      List<Integer> accounts,
      UnaryOperator<Map<Integer, Balance>> change)
      throws Exception {
    long token;
    try {
      token = guard.fencingToken();
    } catch (LockOwnershipLostException lost) {
      metrics.skipped.increment();
      return false;
    }
    switch (bank.update(token, accounts, change).outcome()) {
      case COMMITTED -> {
        metrics.committed.increment();
        return true;
      }
      case DECLINED -> {
        metrics.of(operation).declined.increment();
        return true;
      }
      case REFUSED -> metrics.refused.increment();
      case SKIPPED -> metrics.skipped.increment();
    }
    return false;
  }
}

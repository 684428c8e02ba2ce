package io.lockstep.demo;

import io.lockstep.demo.Bank.Balance;
import io.lockstep.demo.ExclusionChecker.Claim;
import io.lockstep.demo.ExclusionChecker.Hold;
import io.lockstep.demo.RunResult.Invariant;
import io.lockstep.recipes.locks.LockState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.CloseableUtils;

/**
 * A bank-transfer workload on ZooKeeper: several service instances, each with its own Curator
 * client and session, move money between accounts stored in ZooKeeper nodes, and the run checks
 * that the locks kept the books straight.
 *
 * <p><b>Which lock guards what.</b> Each account has two lock paths (see {@link Bank}):
 *
 * <ul>
 *   <li>its <em>writer lock</em>, a mutex queue. Everyone who changes the account holds it:
 *       transfers (through {@code MultiMutex}, in mutex mode), {@code reserve} (through {@code
 *       ReentrantMutex}) and {@code settle} (through {@code NonReentrantMutex}). The three share
 *       one queue, so no two of them ever write an account at once.
 *   <li>its <em>audit lock</em>, a {@code ReadWriteMutex} queue. Audits take its read side,
 *       transfers its write side.
 * </ul>
 *
 * <p>A transfer takes both accounts' writer locks and audit write locks in one atomic {@code
 * MultiMutex} (its four paths listed in random order: the atomic enqueue cannot deadlock), reads
 * both balances, and writes both in one transaction together with the lock's ownership checks.
 * {@code reserve} and {@code settle} move money between the two halves of one account's balance, so
 * they never change its total and need not exclude audits; they write one node, fenced the same
 * way.
 *
 * <p>An audit takes the read side of every account's audit lock in one {@code MultiMutex} and reads
 * every balance: no transfer can be half-way while it reads, so the sum it sees must be the bank's
 * opening total, exactly. The read locks are taken in one atomic enqueue rather than one {@code
 * ReadWriteMutex} after another, because an auditor holding some read locks while queueing for the
 * next would deadlock with a transfer enqueued in between. Once it has read, the audit commits a
 * transaction of its ownership checks alone: if the read locks were lost meanwhile (a session
 * expiry) it is refused and the audit is discarded instead of raising a false alarm.
 *
 * <p><b>Invariants.</b> Money is conserved: every audit and the final count see the opening total.
 * No account is overdrawn. No two holders are ever inside a lock at once unless both read ({@link
 * ExclusionChecker}); an overlap is excused only when a holder's session had ended, which is
 * exactly the case fencing covers.
 */
final class Workload {
  private static final Duration ACQUIRE_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration STOP_GRACE = Duration.ofSeconds(25);

  private final DemoOptions options;
  private final Ensemble ensemble;
  private final Recipes recipes;
  private final Console console;
  private final Metrics metrics = new Metrics();
  private final ExclusionChecker checker = new ExclusionChecker();
  private final SessionLog sessions = new SessionLog();

  /** One simulated service instance: a client with its own session. */
  record Instance(int id, CuratorFramework client) {}

  Workload(DemoOptions options, Ensemble ensemble, Recipes recipes, Console console) {
    this.options = options;
    this.ensemble = ensemble;
    this.recipes = recipes;
    this.console = console;
  }

  /** Runs the workload for the configured duration, then checks the invariants. */
  RunResult run() throws Exception {
    String root =
        "/lockstep-demo/"
            + recipes.name().toLowerCase(Locale.ROOT)
            + "-"
            + UUID.randomUUID().toString().substring(0, 8);
    CuratorFramework admin = ensemble.newClient();
    List<Instance> instances = new ArrayList<>();
    Bank bank = null;
    try {
      bank = Bank.open(admin, root, options.accounts());
      for (int i = 1; i <= options.instances(); i++) {
        CuratorFramework client = ensemble.newClient();
        instances.add(new Instance(i, client));
        sessions.track(client);
      }
      return run(admin, bank, instances);
    } finally {
      instances.forEach(instance -> CloseableUtils.closeQuietly(instance.client()));
      if (bank != null) {
        bank.close(admin);
      }
      admin.close();
    }
  }

  private RunResult run(CuratorFramework admin, Bank bank, List<Instance> instances)
      throws Exception {
    long start = System.nanoTime();
    long deadline = start + options.duration().toNanos();
    ExecutorService workers =
        Executors.newFixedThreadPool(
            options.instances() * options.threads(), Daemons.named("demo-worker"));
    for (Instance instance : instances) {
      for (int t = 0; t < options.threads(); t++) {
        workers.execute(() -> work(instance, bank, deadline));
      }
    }
    workers.shutdown();
    try (Progress progress = new Progress(console, metrics, start, options.duration());
        Chaos chaos =
            options.chaos()
                ? Chaos.start(
                    new Chaos.Scene(
                        ensemble, instances, admin, bank, recipes, metrics, checker, sessions),
                    console,
                    start,
                    options.duration())
                : null) {
      long grace = options.duration().plus(STOP_GRACE).toNanos();
      if (!workers.awaitTermination(grace, TimeUnit.NANOSECONDS)) {
        metrics.problem("workers still busy long after the run ended: interrupted");
        workers.shutdownNow();
        var unused = workers.awaitTermination(10, TimeUnit.SECONDS);
      }
      if (chaos != null) {
        chaos.finish();
      }
      progress.finish();
    }
    Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
    closingAudit(instances.get(0), bank);
    List<Balance> balances = bank.readAll(admin);
    return new RunResult(
        recipes.name(),
        recipes.fenced(),
        recipeNames(),
        elapsed,
        metrics,
        invariants(bank, balances));
  }

  private Map<Operation, String> recipeNames() {
    Map<Operation, String> names = new EnumMap<>(Operation.class);
    for (Operation operation : Operation.values()) {
      names.put(operation, recipes.recipe(operation, options.accounts()));
    }
    return names;
  }

  private List<Invariant> invariants(Bank bank, List<Balance> balances) {
    long total = balances.stream().mapToLong(Balance::total).sum();
    long overdrawn = balances.stream().filter(Balance::overdrawn).count();
    long unbalanced = metrics.auditsUnbalanced.sum();
    Invariant money =
        new Invariant(
            "money conserved",
            total == bank.expectedTotal() && unbalanced == 0,
            String.format(
                "%,d at start, %,d at end; audits: %,d balanced, %,d unbalanced, %,d discarded"
                    + " (read locks lost)",
                bank.expectedTotal(),
                total,
                metrics.auditsBalanced.sum(),
                unbalanced,
                metrics.auditsDiscarded.sum()));
    ExclusionChecker.Verdict verdict = checker.verdict(sessions);
    String overlaps =
        verdict.overlaps() == 0
            ? "no overlaps"
            : String.format(
                "%,d overlaps, %,d of them excused: a holder's session had ended or its lock"
                    + " had reported the loss",
                verdict.overlaps(), verdict.excused());
    Invariant exclusion =
        new Invariant(
            "no two exclusive holders at once",
            verdict.held(),
            String.format(
                "%,d holds checked; %s%s",
                verdict.holds(),
                overlaps,
                verdict.held() ? "" : "; first: " + verdict.violations().get(0)));
    Invariant noOverdraft =
        new Invariant(
            "no account overdrawn",
            overdrawn == 0,
            String.format("%,d of %,d accounts overdrawn at the end", overdrawn, balances.size()));
    return List.of(money, exclusion, noOverdraft);
  }

  /** One worker thread of an instance: random operations until the deadline. */
  private void work(Instance instance, Bank bank, long deadline) {
    Random random = ThreadLocalRandom.current();
    while (System.nanoTime() - deadline < 0 && !Thread.currentThread().isInterrupted()) {
      int dice = random.nextInt(100);
      Operation operation =
          dice < 4
              ? Operation.AUDIT
              : dice < 10
                  ? Operation.BALANCE
                  : dice < 20
                      ? Operation.RESERVE
                      : dice < 30 ? Operation.SETTLE : Operation.TRANSFER;
      try {
        switch (operation) {
          case TRANSFER -> transfer(instance, bank, random);
          case AUDIT -> audit(instance, bank);
          case BALANCE -> balance(instance, bank, random.nextInt(bank.accounts()));
          case RESERVE, SETTLE ->
              single(operation, instance, bank, random.nextInt(bank.accounts()));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Exception e) {
        metrics.of(operation).errors.increment();
      }
    }
  }

  /** One more audit once the workers have stopped, so that every run has audited at least once. */
  private void closingAudit(Instance instance, Bank bank) throws InterruptedException {
    try {
      audit(instance, bank);
    } catch (InterruptedException e) {
      throw e;
    } catch (Exception e) {
      metrics.of(Operation.AUDIT).errors.increment();
      metrics.problem("the closing audit failed: " + e);
    }
  }

  private void transfer(Instance instance, Bank bank, Random random) throws Exception {
    int from = random.nextInt(bank.accounts());
    int to = (from + 1 + random.nextInt(bank.accounts() - 1)) % bank.accounts();
    long amount = 1 + random.nextInt(100);
    CuratorFramework client = instance.client();
    Guard guard = recipes.transfer(client, bank, from, to);
    List<Claim> claims =
        List.of(
            new Claim(bank.lockPath(from), false),
            new Claim(bank.lockPath(to), false),
            new Claim(bank.auditPath(from), false),
            new Claim(bank.auditPath(to), false));
    underLock(
        Operation.TRANSFER,
        instance,
        guard,
        claims,
        () -> {
          Balance source = bank.read(client, from);
          Balance target = bank.read(client, to);
          if (source.available() < amount) {
            return declined(Operation.TRANSFER);
          }
          return write(
              client,
              FencedWrite.prepare(
                  guard,
                  List.of(
                      bank.write(client, from, source.plus(-amount)),
                      bank.write(client, to, target.plus(amount)))));
        });
  }

  private void single(Operation operation, Instance instance, Bank bank, int account)
      throws Exception {
    CuratorFramework client = instance.client();
    Guard guard = recipes.single(operation, client, bank, account);
    underLock(
        operation,
        instance,
        guard,
        List.of(new Claim(bank.lockPath(account), false)),
        () -> {
          Balance balance = bank.read(client, account);
          Balance updated;
          if (operation == Operation.RESERVE) {
            long amount =
                Math.min(balance.available(), 1 + ThreadLocalRandom.current().nextInt(50));
            updated = balance.reserve(amount);
          } else {
            updated = balance.settle();
          }
          if (updated.equals(balance)) {
            return declined(operation);
          }
          return write(
              client, FencedWrite.prepare(guard, List.of(bank.write(client, account, updated))));
        });
  }

  /**
   * Reads one account under the read side of its audit lock: no transfer can be half-way through
   * it, so the account must not be overdrawn. The read counts only if the lock was held throughout.
   */
  private void balance(Instance instance, Bank bank, int account) throws Exception {
    CuratorFramework client = instance.client();
    Guard guard = recipes.balance(client, bank, account);
    underLock(
        Operation.BALANCE,
        instance,
        guard,
        List.of(new Claim(bank.auditPath(account), true)),
        () -> {
          Balance balance = bank.read(client, account);
          if (FencedWrite.prepare(guard, List.of()).commit(client)
              != FencedWrite.Outcome.COMMITTED) {
            return false;
          }
          if (balance.overdrawn()) {
            metrics.problem(
                String.format("instance %d read account %d overdrawn", instance.id(), account));
          }
          return true;
        });
  }

  private void audit(Instance instance, Bank bank) throws Exception {
    CuratorFramework client = instance.client();
    Guard guard = recipes.audit(client, bank);
    List<Claim> claims = new ArrayList<>();
    for (int i = 0; i < bank.accounts(); i++) {
      claims.add(new Claim(bank.auditPath(i), true));
    }
    underLock(
        Operation.AUDIT,
        instance,
        guard,
        claims,
        () -> {
          List<Balance> balances = bank.readAll(client);
          // The reads count only if the read locks were held throughout: commit their checks.
          if (FencedWrite.prepare(guard, List.of()).commit(client)
              != FencedWrite.Outcome.COMMITTED) {
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
    boolean run() throws Exception;
  }

  /**
   * Acquires {@code guard}, runs {@code critical} inside the exclusion checker and releases. The
   * acquire latency is recorded; a timeout is counted, not thrown.
   */
  private void underLock(
      Operation operation, Instance instance, Guard guard, List<Claim> claims, Critical critical)
      throws Exception {
    Metrics.PerOperation counts = metrics.of(operation);
    AtomicBoolean lost = new AtomicBoolean();
    guard.onStateChange(
        state -> {
          metrics.heard(state);
          if (state == LockState.LOST) {
            lost.set(true);
          }
        });
    long begin = System.nanoTime();
    if (!guard.acquire(ACQUIRE_TIMEOUT)) {
      counts.timeouts.increment();
      return;
    }
    try {
      counts.acquired(System.nanoTime() - begin);
      long session = SessionLog.sessionOf(instance.client());
      Hold hold = checker.enter(operation.label(), instance.id(), session, claims, lost::get);
      boolean completed;
      try {
        completed = critical.run();
      } finally {
        checker.leave(hold);
      }
      if (completed) {
        counts.completed.increment();
      }
    } finally {
      guard.release();
    }
  }

  private boolean declined(Operation operation) {
    metrics.of(operation).declined.increment();
    return true;
  }

  /** Commits a prepared write and counts what became of it; true if it committed. */
  private boolean write(CuratorFramework client, FencedWrite write) throws Exception {
    FencedWrite.Outcome outcome = write.commit(client);
    switch (outcome) {
      case COMMITTED -> metrics.committed.increment();
      case REFUSED -> metrics.refused.increment();
      case SKIPPED -> metrics.skipped.increment();
    }
    return outcome == FencedWrite.Outcome.COMMITTED;
  }
}

package io.lockstep.demo;

import io.lockstep.demo.Bank.Balance;
import io.lockstep.demo.RunResult.Invariant;
import io.lockstep.testing.Ensemble;
import io.lockstep.testing.ExclusionChecker;
import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.CloseableUtils;

/**
 * A bank-transfer workload on ZooKeeper: several service instances, each with its own Curator
 * client and session, move money between accounts stored in a database (H2, in this process, see
 * {@link Bank}), and the run checks that the locks and the database's fence kept the books
 * straight.
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
 * MultiMutex} (its four paths listed in random order: the atomic enqueue cannot deadlock), then, in
 * one database transaction, admits the lock's fencing token for both accounts ({@code JdbcFence}),
 * reads both balances and writes both: the database refuses a holder older than one it has
 * admitted, before it reads. {@code reserve} and {@code settle} move money between the two halves
 * of one account's balance, so they never change its total and need not exclude audits; they write
 * one row, fenced the same way.
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
 * ExclusionChecker}); an overlap is excused only when a holder's session had ended or its lock had
 * told it of the risk or the loss, which is exactly the case fencing covers.
 */
final class Workload {
  private static final Duration STOP_GRACE = Duration.ofSeconds(25);

  private final DemoOptions options;
  private final Ensemble ensemble;
  private final Library library;
  private final Console console;
  private final Metrics metrics = new Metrics();
  private final ExclusionChecker checker = new ExclusionChecker();
  private final Operations operations;

  /** One simulated service instance: a client with its own session. */
  record Instance(int id, CuratorFramework client) {}

  Workload(DemoOptions options, Ensemble ensemble, Library library, Console console) {
    this.options = options;
    this.ensemble = ensemble;
    this.library = library;
    this.console = console;
    this.operations = new Operations(library, metrics, checker);
  }

  /** Runs the workload for the configured duration, then checks the invariants. */
  RunResult run() throws Exception {
    String root =
        "/lockstep-demo/"
            + library.label().toLowerCase(Locale.ROOT)
            + "-"
            + UUID.randomUUID().toString().substring(0, 8);
    CuratorFramework admin = ensemble.newClient();
    List<Instance> instances = new ArrayList<>();
    Bank bank = null;
    MeterFigures meters = library.fenced() ? new MeterFigures() : null;
    try {
      // a connection per worker, and some for the audits, the fault phase and the final count
      bank = Bank.open(root, options.accounts(), options.instances() * options.threads() + 8);
      for (int i = 1; i <= options.instances(); i++) {
        CuratorFramework client = ensemble.newClient();
        instances.add(new Instance(i, client));
        checker.followSessions(client);
        if (meters != null) {
          meters.observe(client);
        }
      }
      return run(bank, instances, Optional.ofNullable(meters));
    } finally {
      if (meters != null) {
        meters.close();
      }
      instances.forEach(instance -> CloseableUtils.closeQuietly(instance.client()));
      if (bank != null) {
        bank.close(admin);
      }
      admin.close();
    }
  }

  private RunResult run(Bank bank, List<Instance> instances, Optional<MeterFigures> meters)
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
        FaultPhase faults =
            options.faults()
                ? FaultPhase.start(
                    new FaultPhase.Scene(ensemble, instances, bank, library, metrics, checker),
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
      if (faults != null) {
        faults.finish();
      }
      progress.finish();
    }
    Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
    closingAudit(instances.get(0), bank);
    List<Balance> balances = bank.readAll();
    return new RunResult(
        library.label(),
        library.fenced(),
        recipeNames(bank),
        elapsed,
        metrics,
        meters.map(MeterFigures::snapshot),
        invariants(bank, balances));
  }

  private Map<Operation, String> recipeNames(Bank bank) {
    Map<Operation, String> names = new EnumMap<>(Operation.class);
    names.put(Operation.TRANSFER, library.describeMultiLock(bank.transferParts(0, 1)));
    names.put(Operation.AUDIT, library.describeMultiLock(bank.auditParts()));
    names.put(Operation.BALANCE, Recipe.READ.className(library));
    for (Operation single : List.of(Operation.RESERVE, Operation.SETTLE)) {
      names.put(single, bank.accountPart(single, library, 0).mode().className(library));
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
    ExclusionChecker.Verdict verdict = checker.verdict();
    String overlaps =
        verdict.overlaps() == 0
            ? "no overlaps"
            : String.format(
                "%,d overlaps, %,d of them excused: a holder's session had ended or its lock"
                    + " had reported the risk or the loss",
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
          case TRANSFER -> operations.transfer(instance, bank, random);
          case AUDIT -> operations.audit(instance, bank);
          case BALANCE -> operations.balance(instance, bank, random.nextInt(bank.accounts()));
          case RESERVE, SETTLE ->
              operations.single(operation, instance, bank, random.nextInt(bank.accounts()));
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
      operations.audit(instance, bank);
    } catch (InterruptedException e) {
      throw e;
    } catch (Exception e) {
      metrics.of(Operation.AUDIT).errors.increment();
      metrics.problem("the closing audit failed: " + e);
    }
  }
}

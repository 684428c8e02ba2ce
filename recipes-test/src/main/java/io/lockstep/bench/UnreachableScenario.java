package io.lockstep.bench;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockView;
import io.lockstep.recipes.locks.MultiMutex;
import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.spring.LockstepLock;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testing.Library;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryForever;
import org.apache.curator.utils.CloseableUtils;

/**
 * Budgets with ZooKeeper unreachable (issue 21): how long after its budget each timed form of
 * Lockstep's locks returns when its client cannot reach ZooKeeper, and how long a release or a
 * hold's close takes then. The promise is the budget plus 250 ms ({@link #PROMISED_GRACE}); {@code
 * UnreachableBudgetTest} asserts it with a margin for loaded machines, this scenario measures it.
 *
 * <p><b>Workload.</b> Each row ({@link Form}) gets a client of its own that reaches the suite's
 * server through a {@link TcpProxy}, with a connection timeout of 10 s and a session timeout of 30
 * s: a call that waited for the connection rather than its budget would be seconds late. Its trials
 * run in fault periods of {@link #TRIALS_PER_FAULT}: with the client connected, the period's lock
 * objects are built, each on a path of its own (and, for a release, acquired); then the proxy is
 * {@link TcpProxy#cut() cut} and the client's {@code SUSPENDED} awaited, or the proxy starts a
 * {@link TcpProxy#blackhole() blackhole}, a silent partition the client does not notice before its
 * read timeout (20 s, longer than a period); each call is timed from the call to its return (for
 * {@code acquireAsync}, to the completion of its stage); then the proxy heals and the client
 * reconnects to its session. The overrun of a trial is its time minus its budget (1 s, or 0 for the
 * zero-budget forms, releases and closes). The first trials of a row warm it up and are not
 * counted.
 *
 * <p>Curator's baseline is {@code InterProcessMutex.acquire(1, SECONDS)} on the same kind of client
 * with the proxy cut, a trial a period: Curator's foreground requests first wait up to the
 * connection timeout for a connection, whatever the lock's budget, so a trial takes tens of
 * seconds.
 *
 * <p><b>Command</b> (from the repository root; {@code --update} replaces this section's block of
 * {@code docs/benchmarks.md} and nothing else):
 *
 * <pre>
 * mvn -B -Pbench verify -DskipTests -Dbench.args="--full --only unreachable --update"
 * </pre>
 */
final class UnreachableScenario {
  /** What the issue promises above a budget (the engine's grace is 200 ms). */
  static final Duration PROMISED_GRACE = Duration.ofMillis(250);

  /** The budget of the timed forms. */
  static final Duration BUDGET = Duration.ofSeconds(1);

  /**
   * Trials between a fault and its healing: a period lasts a few seconds, far from the timeouts.
   */
  static final int TRIALS_PER_FAULT = 5;

  private static final int SESSION_TIMEOUT_MS = 30_000;
  private static final int CONNECTION_TIMEOUT_MS = 10_000;
  private static final Duration STATE_WAIT = Duration.ofSeconds(30);

  /** Three paths for the multi-lock, as in the contract tests. */
  private static final int MULTI_PATHS = 3;

  /** The bound of the local-handoff rows, as in the contract tests: runs of holds reach it. */
  private static final int LOCAL_HANDOFFS = 2;

  private UnreachableScenario() {}

  /** How ZooKeeper is out of the client's reach during a fault period. */
  enum Fault {
    /** {@link TcpProxy#cut()}: connections closed and refused; the client is suspended. */
    CUT("cut"),
    /** {@link TcpProxy#blackhole()}: every byte dropped; the client believes it is connected. */
    BLACKHOLE("silent partition");

    private final String label;

    Fault(String label) {
      this.label = label;
    }

    String label() {
      return label;
    }
  }

  /** One timed call of a trial, returning what it saw: "false", an exception's name... */
  @FunctionalInterface
  interface Call {
    String call() throws Exception;
  }

  /** Work left after a fault period, done once the client is back (a holder's release). */
  @FunctionalInterface
  interface Cleanup {
    void run() throws Exception;

    Cleanup NONE = () -> {};
  }

  /**
   * A fault period's calls, built while the client is connected.
   *
   * @param calls one per trial, in order
   * @param cleanup run once the client is back
   */
  record Batch(List<Call> calls, Cleanup cleanup) {
    Batch(List<Call> calls) {
      this(calls, Cleanup.NONE);
    }
  }

  /** Builds the calls of a fault period: {@code count} of them on {@code client}. */
  @FunctionalInterface
  interface Preparer {
    Batch prepare(CuratorFramework client, int count) throws Exception;
  }

  /**
   * A row: one form called with ZooKeeper out of reach.
   *
   * @param call the call, as the page names it
   * @param lock the lock it is called on
   * @param library whose lock
   * @param fault how ZooKeeper is out of reach
   * @param budget the call's budget; its overrun is what it takes beyond
   * @param retryForever whether the client retries forever ({@code RetryForever(500)}) rather than
   *     three times ({@code ExponentialBackoffRetry(100, 3)})
   * @param perFault trials per fault period
   * @param preparer builds a period's calls
   */
  record Form(
      String call,
      String lock,
      Library library,
      Fault fault,
      Duration budget,
      boolean retryForever,
      int perFault,
      Preparer preparer) {}

  /**
   * A row's figures.
   *
   * @param call the call, as the page names it
   * @param lock the lock it is called on
   * @param library whose lock
   * @param fault how ZooKeeper was out of reach
   * @param budget the call's budget
   * @param overrunNanos each counted trial's time beyond the budget, in increasing order
   * @param outcomes what the calls returned or threw, with how many did so
   */
  record Result(
      String call,
      String lock,
      Library library,
      Fault fault,
      Duration budget,
      List<Long> overrunNanos,
      Map<String, Integer> outcomes) {

    int trials() {
      return overrunNanos.size();
    }

    /** The overrun at percentile {@code p} (nearest rank), in milliseconds. */
    double overrunMillis(double p) {
      int rank = (int) Math.ceil(p / 100 * overrunNanos.size());
      return overrunNanos.get(Math.max(0, rank - 1)) / 1e6;
    }

    double maxMillis() {
      return overrunNanos.get(overrunNanos.size() - 1) / 1e6;
    }

    /** Whether the p99 overrun is within {@link #PROMISED_GRACE}; Curator's rows are not judged. */
    boolean meetsPromise() {
      return overrunMillis(99) <= PROMISED_GRACE.toMillis();
    }
  }

  /**
   * When the section ran, for the line at the top of its block (which may be updated alone).
   *
   * @param started the start, as the page writes dates
   * @param took how long the section took
   * @param loadBefore the load average before it
   * @param loadAfter the load average after it
   * @param trials counted trials per Lockstep row
   * @param warmUp trials per Lockstep row not counted
   * @param curatorTrials trials of Curator's row
   */
  record Run(
      String started,
      Duration took,
      String loadBefore,
      String loadAfter,
      int trials,
      int warmUp,
      int curatorTrials) {}

  /** Every row, in page order: the forms with the proxy cut, then silent partitions, Curator's. */
  static List<Form> forms() {
    List<Form> forms = new ArrayList<>();
    for (Fault fault : Fault.values()) {
      forms.add(timedAcquire("`ReentrantMutex`", fault, ReentrantMutex::new));
      forms.add(timedAcquire("`NonReentrantMutex`", fault, NonReentrantMutex::new));
      forms.add(
          timedAcquire(
              "`ReadWriteMutex.writeLock()`",
              fault,
              (client, path) -> new ReadWriteMutex(client, path).writeLock()));
      forms.add(
          timedAcquire(
              "`MultiMutex`, K = " + MULTI_PATHS,
              fault,
              (client, path) -> new MultiMutex(client, multiPaths(path))));
      forms.add(
          timedAcquire(
              "`ReentrantMutex`, local handoff (" + LOCAL_HANDOFFS + ")",
              fault,
              UnreachableScenario::localHandoff));
      if (fault == Fault.CUT) {
        forms.addAll(otherForms());
      }
    }
    forms.add(
        new Form(
            "`acquire(1, SECONDS)`",
            "Curator's `InterProcessMutex`",
            Library.CURATOR,
            Fault.CUT,
            BUDGET,
            false,
            1,
            (client, count) ->
                batch(
                    count,
                    () -> {
                      InterProcessMutex mutex = new InterProcessMutex(client, unique());
                      return () -> answer(mutex.acquire(BUDGET.toMillis(), TimeUnit.MILLISECONDS));
                    })));
    return forms;
  }

  /** The forms beyond {@code acquire(1 s)}, on a {@code ReentrantMutex}, with the proxy cut. */
  private static List<Form> otherForms() {
    String mutex = "`ReentrantMutex`";
    List<Form> forms = new ArrayList<>();
    forms.add(
        lockstep(
            "`acquire(1 s)`, behind a holder of the process",
            "`ReentrantMutex`, local handoff (" + LOCAL_HANDOFFS + ")",
            BUDGET,
            false,
            UnreachableScenario::behindLocalHolder));
    forms.add(
        lockstep(
            "`acquire(0)`",
            mutex,
            Duration.ZERO,
            false,
            (client, count) ->
                batch(
                    count,
                    () -> {
                      FencedLock lock = new ReentrantMutex(client, unique());
                      return () -> answer(lock.acquire(0, TimeUnit.MILLISECONDS));
                    })));
    forms.add(
        lockstep(
            "`asLock().tryLock()`",
            mutex,
            Duration.ZERO,
            false,
            (client, count) ->
                batch(
                    count,
                    () -> {
                      LockView lock = new ReentrantMutex(client, unique()).asLock();
                      return () -> answer(lock.tryLock());
                    })));
    forms.add(
        lockstep(
            "`tryHold(1 s)`",
            mutex,
            BUDGET,
            false,
            (client, count) ->
                batch(
                    count,
                    () -> {
                      FencedLock lock = new ReentrantMutex(client, unique());
                      return () -> answer(lock.tryHold(BUDGET));
                    })));
    for (boolean forever : List.of(false, true)) {
      forms.add(
          lockstep(
              forever
                  ? "`acquireAsync(1 s)`, to the stage's end, client retrying forever"
                  : "`acquireAsync(1 s)`, to the stage's end",
              mutex,
              BUDGET,
              forever,
              (client, count) ->
                  batch(
                      count,
                      () -> {
                        FencedLock lock = new ReentrantMutex(client, unique());
                        return () -> {
                          try (LockHold hold =
                              lock.acquireAsync(BUDGET).toCompletableFuture().join()) {
                            return "a hold " + hold.fencingToken();
                          }
                        };
                      })));
    }
    forms.add(
        lockstep(
            "`asLock().tryLock(1 s)`",
            mutex,
            BUDGET,
            false,
            (client, count) ->
                batch(
                    count,
                    () -> {
                      LockView lock = new ReentrantMutex(client, unique()).asLock();
                      return () -> answer(lock.tryLock(BUDGET.toMillis(), TimeUnit.MILLISECONDS));
                    })));
    forms.add(
        lockstep(
            "`obtain(key).tryLock(1 s)`",
            "`LockstepLockRegistry` (Spring)",
            BUDGET,
            false,
            (client, count) -> {
              LockstepLockRegistry registry = new LockstepLockRegistry(client, unique());
              AtomicInteger keys = new AtomicInteger();
              return batch(
                  count,
                  () -> {
                    LockstepLock lock = registry.obtain("key-" + keys.incrementAndGet());
                    return () -> answer(lock.tryLock(BUDGET.toMillis(), TimeUnit.MILLISECONDS));
                  });
            }));
    forms.add(
        lockstep(
            "`release()` of a hold taken before",
            mutex,
            Duration.ZERO,
            false,
            (client, count) ->
                batch(
                    count,
                    () -> {
                      FencedLock lock = new ReentrantMutex(client, unique());
                      lock.acquire();
                      return () -> {
                        lock.release();
                        return "returned";
                      };
                    })));
    forms.add(
        lockstep(
            "`LockHold.close()` of a hold taken before",
            mutex,
            Duration.ZERO,
            false,
            (client, count) ->
                batch(
                    count,
                    () -> {
                      LockHold hold = new ReentrantMutex(client, unique()).hold();
                      return () -> {
                        hold.close();
                        return "returned";
                      };
                    })));
    return forms;
  }

  private static Form timedAcquire(
      String lock, Fault fault, BiFunction<CuratorFramework, String, FencedLock> factory) {
    return new Form(
        "`acquire(1 s)`",
        lock,
        Library.LOCKSTEP,
        fault,
        BUDGET,
        false,
        TRIALS_PER_FAULT,
        (client, count) ->
            batch(
                count,
                () -> {
                  FencedLock fenced = factory.apply(client, unique());
                  return () -> answer(fenced.acquire(BUDGET.toMillis(), TimeUnit.MILLISECONDS));
                }));
  }

  private static Form lockstep(
      String call, String lock, Duration budget, boolean retryForever, Preparer preparer) {
    return new Form(
        call, lock, Library.LOCKSTEP, Fault.CUT, budget, retryForever, TRIALS_PER_FAULT, preparer);
  }

  private static FencedLock localHandoff(CuratorFramework client, String path) {
    return ReentrantMutex.builder(client, path).localHandoff(LOCAL_HANDOFFS).build();
  }

  private static List<String> multiPaths(String path) {
    List<String> paths = new ArrayList<>();
    for (int i = 0; i < MULTI_PATHS; i++) {
      paths.add(path + "-" + (char) ('a' + i));
    }
    return paths;
  }

  /**
   * Waiters behind a hold of the same process, local handoff on: the hold is taken by a thread of
   * its own before the fault and released once the client is back; each trial is another lock
   * object of the same client and path, queued in memory behind it.
   */
  private static Batch behindLocalHolder(CuratorFramework client, int count) throws Exception {
    String path = unique();
    FencedLock holder = localHandoff(client, path);
    ExecutorService holderThread = Executors.newSingleThreadExecutor();
    try {
      holderThread
          .submit(
              () -> {
                holder.acquire();
                return null;
              })
          .get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      holderThread.shutdownNow();
      throw e;
    }
    Batch waiters =
        batch(
            count,
            () -> {
              FencedLock waiter = localHandoff(client, path);
              return () -> answer(waiter.acquire(BUDGET.toMillis(), TimeUnit.MILLISECONDS));
            });
    return new Batch(
        waiters.calls(),
        () -> {
          try {
            holderThread.submit(holder::release).get(30, TimeUnit.SECONDS);
          } finally {
            holderThread.shutdownNow();
          }
        });
  }

  /** Builds one call per trial while connected (a lock object, perhaps a hold). */
  @FunctionalInterface
  private interface CallFactory {
    Call next() throws Exception;
  }

  private static Batch batch(int count, CallFactory factory) throws Exception {
    List<Call> calls = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      calls.add(factory.next());
    }
    return new Batch(calls);
  }

  private static String unique() {
    return Paths.unique("unreachable");
  }

  private static String answer(boolean acquired) {
    return acquired ? "acquired" : "false";
  }

  private static String answer(Optional<LockHold> hold) {
    if (hold.isPresent()) {
      hold.get().close();
      return "a hold";
    }
    return "empty";
  }

  /**
   * Runs {@code form}: {@code warmUp} trials not counted, then {@code trials} counted.
   *
   * @param connect the suite's server
   */
  static Result run(String connect, Form form, int warmUp, int trials) throws Exception {
    List<Long> overruns = new ArrayList<>();
    Map<String, Integer> outcomes = new LinkedHashMap<>();
    try (TcpProxy proxy = SlowLinkRuns.startProxy(connect);
        Client client = new Client(proxy.connectString(), form.retryForever())) {
      int done = 0;
      while (done < warmUp + trials) {
        int count = Math.min(form.perFault(), warmUp + trials - done);
        client.awaitConnected();
        Batch batch = form.preparer().prepare(client.curator, count);
        int reconnects = client.reconnects.get();
        if (form.fault() == Fault.CUT) {
          proxy.cut();
          client.awaitSuspended();
        } else {
          proxy.blackhole();
        }
        for (Call call : batch.calls()) {
          long start = System.nanoTime();
          String outcome = outcome(call);
          long overrun = System.nanoTime() - start - form.budget().toNanos();
          if (done++ >= warmUp) {
            overruns.add(overrun);
            outcomes.merge(outcome, 1, Integer::sum);
          }
        }
        proxy.heal();
        client.awaitReconnected(reconnects);
        batch.cleanup().run();
      }
    }
    Collections.sort(overruns);
    return new Result(
        form.call(),
        form.lock(),
        form.library(),
        form.fault(),
        form.budget(),
        List.copyOf(overruns),
        outcomes);
  }

  /** What a call returned, or the name of what it threw (a stage's failure: its cause's). */
  private static String outcome(Call call) throws InterruptedException {
    try {
      return call.call();
    } catch (InterruptedException e) {
      throw e;
    } catch (CompletionException e) {
      return e.getCause() == null ? name(e) : name(e.getCause());
    } catch (Exception e) {
      return name(e);
    }
  }

  private static String name(Throwable thrown) {
    return thrown.getClass().getSimpleName();
  }

  /** A row's client behind the proxy, with the connection states it went through. */
  private static final class Client implements AutoCloseable {
    private final CuratorFramework curator;
    private final AtomicInteger reconnects = new AtomicInteger();

    // Volatile: written by Curator's event thread, read by the scenario's.
    private volatile ConnectionState last = ConnectionState.LOST;

    Client(String connect, boolean retryForever) {
      RetryPolicy retry =
          retryForever ? new RetryForever(500) : new ExponentialBackoffRetry(100, 3);
      curator =
          CuratorFrameworkFactory.builder()
              .connectString(connect)
              .sessionTimeoutMs(SESSION_TIMEOUT_MS)
              .connectionTimeoutMs(CONNECTION_TIMEOUT_MS)
              .retryPolicy(retry)
              .ensembleTracker(false)
              .build();
      curator
          .getConnectionStateListenable()
          .addListener(
              (c, state) -> {
                last = state;
                if (state == ConnectionState.RECONNECTED || state == ConnectionState.CONNECTED) {
                  reconnects.incrementAndGet();
                }
              });
      curator.start();
    }

    void awaitConnected() {
      Poll.until(
          "the client is connected",
          STATE_WAIT,
          () -> last.isConnected() && curator.getZookeeperClient().isConnected());
    }

    void awaitSuspended() {
      Poll.until(
          "the client is suspended",
          STATE_WAIT,
          () -> last == ConnectionState.SUSPENDED || last == ConnectionState.LOST);
    }

    /** Waits for a reconnection after the one counted {@code before}: the fault was noticed. */
    void awaitReconnected(int before) {
      Poll.until("the client reconnected", STATE_WAIT, () -> reconnects.get() > before);
      awaitConnected();
    }

    @Override
    public void close() {
      CloseableUtils.closeQuietly(curator);
    }
  }

  /** "cut, 30 trials: p50 +12.0 ms, p99 +40.1 ms, max +40.1 ms; LockUnreachableException ×30". */
  static String describe(Result result) {
    return String.format(
        Locale.ROOT,
        "%s on %s, %s, budget %d ms, %d trials: overrun p50 %.1f ms, p99 %.1f ms, max %.1f ms; %s",
        result.call(),
        result.lock(),
        result.fault().label(),
        result.budget().toMillis(),
        result.trials(),
        result.overrunMillis(50),
        result.overrunMillis(99),
        result.maxMillis(),
        result.outcomes());
  }
}

package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A caller whose budget ran out has the 200 ms grace counted from its deadline, not from when it
 * woke, and never waits past it for timers that run late; but a budget spent before its work got
 * under way still leaves that work its grace. For every lock shape and the semaphore:
 *
 * <ul>
 *   <li>The caller wakes ten seconds "late" (a ticker that jumps, as the clock does for a process
 *       frozen past its deadline), every timer of the client runs five seconds after it is due (a
 *       starved scheduler), and ZooKeeper takes 600 ms per round trip, so nothing answers within
 *       the budget or the grace: the call returns empty at once on waking. Before, it waited twice
 *       the grace for the timers. The withdrawn attempt leaves nothing behind once answers are
 *       quick again.
 *   <li>Starting the work takes ten seconds (a ticker that adds them to every read but a budget's
 *       start, as a cold JVM or a collection pause does): a zero budget on a free lock still gets
 *       its one try with the grace from when it was sent, blocking and asynchronous: granted when
 *       the server answers within the grace, refused only after it otherwise. Counting the grace
 *       from the deadline alone refused it at once.
 *   <li>An interrupted semaphore caller waits for its cleanup only within the grace, as
 *       failure-semantics.md says.
 * </ul>
 */
@Timeout(60)
class LateWakeBudgetTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final long BUDGET_MILLIS = 200;

  /** The library's grace after a budget (docs/failure-semantics.md). */
  private static final long GRACE_MILLIS = 200;

  /**
   * The recipe objects the rules hold for: each lock shape (plain, its attempts through its
   * process's place, several paths) and the semaphore.
   */
  enum Recipe {
    MUTEX,
    MUTEX_LOCAL_HANDOFF,
    LINGERING_MUTEX,
    NON_REENTRANT_MUTEX,
    SHARED_READ_LOCK,
    WRITE_LOCK_LOCAL_HANDOFF,
    MULTI_MUTEX,
    SEMAPHORE;

    Timed make(CuratorFramework client, String path) {
      if (this == SEMAPHORE) {
        CountingSemaphore semaphore = new CountingSemaphore(client, path, 1);
        return new Timed(semaphore::tryHold, semaphore::acquireAsync, semaphore);
      }
      FencedLock lock =
          switch (this) {
            case MUTEX -> new ReentrantMutex(client, path);
            case MUTEX_LOCAL_HANDOFF ->
                ReentrantMutex.builder(client, path).localHandoff(8).build();
            case LINGERING_MUTEX ->
                ReentrantMutex.builder(client, path).linger(Duration.ofMillis(500)).build();
            case NON_REENTRANT_MUTEX -> new NonReentrantMutex(client, path);
            case SHARED_READ_LOCK ->
                ReadWriteMutex.builder(client, path).localHandoff().build().readLock();
            case WRITE_LOCK_LOCAL_HANDOFF ->
                ReadWriteMutex.builder(client, path).localHandoff().build().writeLock();
            case MULTI_MUTEX -> new MultiMutex(client, List.of(path + "/a", path + "/b"));
            case SEMAPHORE -> throw new AssertionError("made above");
          };
      return new Timed(
          lock::tryHold, lock::acquireAsync, lock instanceof AutoCloseable c ? c : () -> {});
    }
  }

  /** A recipe object's timed forms. */
  record Timed(
      TryHold blocking, Function<Duration, CompletionStage<LockHold>> async, AutoCloseable closer) {
    Optional<LockHold> tryHold(Duration timeout) throws InterruptedException {
      return blocking.tryHold(timeout);
    }

    /** The asynchronous form's hold, or null if it failed. */
    LockHold acquireAsync(Duration timeout) throws Exception {
      return async
          .apply(timeout)
          .toCompletableFuture()
          .exceptionally(e -> null)
          .get(10, TimeUnit.SECONDS);
    }
  }

  /** {@code tryHold(Duration)}, on whichever recipe. */
  @FunctionalInterface
  interface TryHold {
    Optional<LockHold> tryHold(Duration timeout) throws InterruptedException;
  }

  /** A scheduler whose timers run {@value #LATE_MILLIS} ms after they are due, while it is late. */
  private static final class LateTimers extends ScheduledThreadPoolExecutor {
    static final long LATE_MILLIS = 5_000;
    volatile boolean late = true;

    LateTimers() {
      super(2, task -> new Thread(task, "late-timers"));
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      long millis = unit.toMillis(delay) + (late ? LATE_MILLIS : 0);
      return super.schedule(command, millis, TimeUnit.MILLISECONDS);
    }
  }

  /**
   * Real time, plus ten seconds once real time passes the moment it is told; it notes when the
   * caller's thread first read the clock after that.
   */
  private static final class JumpingTicker implements LongSupplier {
    private volatile long jumpAt = Long.MAX_VALUE;
    private volatile Thread caller;
    private final AtomicLong callerSawTheJumpAt = new AtomicLong(); // System.nanoTime(); 0: not yet

    void jumpAt(long nanos, Thread caller) {
      this.caller = caller;
      jumpAt = nanos;
    }

    /** When the caller's thread first read the clock after the jump, or 0 if it has not. */
    long callerSawTheJumpAt() {
      return callerSawTheJumpAt.get();
    }

    @Override
    public long getAsLong() {
      long now = System.nanoTime();
      if (now - jumpAt < 0) {
        return now;
      }
      if (Thread.currentThread() == caller) {
        callerSawTheJumpAt.compareAndSet(0, now);
      }
      return now + TimeUnit.SECONDS.toNanos(10);
    }
  }

  /**
   * Real time, plus ten seconds for every read but a budget's start: as if starting every call's
   * work took ten seconds (a cold JVM, a collection pause), so each budget is spent before its
   * first request is out. It notes when the caller's thread first read it past a budget's start:
   * before the caller's work got under way.
   */
  private static final class SlowStartTicker implements LongSupplier {
    private static final StackWalker STACK = StackWalker.getInstance();
    private final Thread caller;
    private final AtomicLong callerStartedAt = new AtomicLong(); // System.nanoTime(); 0: not yet

    SlowStartTicker(Thread caller) {
      this.caller = caller;
    }

    /** When the caller's thread first read the slowed clock, or 0 if it has not. */
    long callerStartedAt() {
      return callerStartedAt.get();
    }

    @Override
    public long getAsLong() {
      long now = System.nanoTime();
      boolean budgetStart =
          STACK.walk(
              frames ->
                  frames.anyMatch(
                      f ->
                          f.getClassName().endsWith(".engine.Budget")
                              && f.getMethodName().equals("of")));
      if (budgetStart) {
        return now;
      }
      if (Thread.currentThread() == caller) {
        callerStartedAt.compareAndSet(0, now);
      }
      return now + TimeUnit.SECONDS.toNanos(10);
    }
  }

  private final LateTimers scheduler = new LateTimers();

  /** A client that reaches the server through {@code proxy}, on {@code ticker} and the timers. */
  private CuratorFramework throughProxy(TcpProxy proxy, LongSupplier ticker) {
    CuratorFramework client = zk.newClient(builder -> builder.connectString(proxy.connectString()));
    ClientTime.use(client, ticker, scheduler);
    return client;
  }

  /** The only lease of the semaphore at {@code sem}, held by another client. */
  private LockHold leaseHeldElsewhere() throws InterruptedException {
    return new CountingSemaphore(zk.newClient(), zk.path("sem"), 1).hold();
  }

  @AfterEach
  void stopScheduler() {
    scheduler.shutdownNow(); // each test checks first that its timers left nothing behind
  }

  @ParameterizedTest
  @EnumSource(Recipe.class)
  void aCallerThatWokeLate_withTimersRunningLate_answersAtOnce(Recipe recipe) throws Exception {
    TcpProxy proxy = zk.proxy();
    JumpingTicker ticker = new JumpingTicker();
    CuratorFramework client = throughProxy(proxy, ticker);
    Timed lock = recipe.make(client, zk.path("lock"));
    proxy.setLatency(300); // 600 ms a round trip: no answer within the budget or the grace

    // The clock jumps halfway through the budget, while the caller waits, when its request went
    // out in time. A caller whose work got under way only after the jump (a cold or loaded JVM
    // taking over half the budget to send it) has its grace counted from then, as documented: so
    // the time is measured from when the caller first read the jumped clock, not from the call.
    ticker.jumpAt(
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BUDGET_MILLIS / 2),
        Thread.currentThread());
    Optional<LockHold> hold = lock.tryHold(Duration.ofMillis(BUDGET_MILLIS));
    long returnedAt = System.nanoTime();

    assertThat(hold).isEmpty();
    assertThat(millisFrom(ticker.callerSawTheJumpAt(), returnedAt))
        .as(
            "returned within the grace of reading the jumped clock (the old wait on waking, twice"
                + " the grace, fails)")
        .isLessThan(2 * GRACE_MILLIS);

    proxy.setLatency(0);
    scheduler.late = false;
    Optional<LockHold> granted = lock.tryHold(Duration.ofSeconds(10));
    assertThat(granted).as("granted once answers are quick").isPresent();
    granted.get().close();
    lock.closer().close();
    zk.assertNothingLeft(); // while the scheduler still runs the withdrawn attempt's cleanup
  }

  @Test
  void anInterruptedSemaphoreCaller_withTimersRunningLate_returnsWithinTheGrace() throws Exception {
    LockHold held = leaseHeldElsewhere();
    TcpProxy proxy = zk.proxy();
    scheduler.late = false;
    CuratorFramework client = throughProxy(proxy, System::nanoTime);
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("sem"), 1);
    CompletableFuture<Long> interruptSeenAt = new CompletableFuture<>(); // System.nanoTime()
    Thread waiter =
        new Thread(
            () -> {
              try {
                semaphore.hold();
                interruptSeenAt.completeExceptionally(new AssertionError("granted"));
              } catch (InterruptedException expected) {
                interruptSeenAt.complete(System.nanoTime());
              } catch (RuntimeException e) {
                interruptSeenAt.completeExceptionally(e);
              }
            },
            "semaphore-waiter");
    waiter.start();
    Awaitility.await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> ZooKeeperExtension.childrenOrNone(client, zk.path("sem/leases")).size() == 2);

    // The withdrawn lease's delete takes 600 ms to be answered, and the request's own timers run
    // five seconds late: only the caller's bound on its cleanup ends the wait.
    proxy.setLatency(300);
    scheduler.late = true;
    long interruptedAt = System.nanoTime();
    waiter.interrupt();
    long tookMillis =
        TimeUnit.NANOSECONDS.toMillis(interruptSeenAt.get(10, TimeUnit.SECONDS) - interruptedAt);

    assertThat(tookMillis)
        .as("returned within the grace of the interrupt (the old bound, twice the grace, fails)")
        .isLessThan(2 * GRACE_MILLIS);

    proxy.setLatency(0);
    scheduler.late = false;
    held.close();
    semaphore.close();
    zk.assertNothingLeft();
  }

  @Test
  void aSemaphoreCallerWhoseTimersRunLate_givesBackALeaseGrantedAfterItGaveUp() throws Exception {
    LockHold held = leaseHeldElsewhere();
    TcpProxy proxy = zk.proxy();
    CuratorFramework client = throughProxy(proxy, System::nanoTime); // timers five seconds late
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("sem"), 1);
    CompletableFuture<Optional<LockHold>> call =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return semaphore.tryHold(Duration.ofMillis(5_700));
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    Awaitility.await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> ZooKeeperExtension.childrenOrNone(client, zk.path("sem/leases")).size() == 2);

    // The lease is granted about 4.5 s later (the watch event, then a read), within the budget;
    // the request then gives its mutex back and completes only when the delete is answered, 3 s
    // after the grant. The caller stops waiting 300 ms after its deadline, about 5.9 s after the
    // release (its request's own timer is five seconds late), before that: its request had ended,
    // so the cancel is refused and the lease must go back once the request completes. (Were the
    // caller's thread held up past the request's end, it would get the lease: closed here.)
    proxy.setLatency(1_500);
    held.close();
    call.get(20, TimeUnit.SECONDS).ifPresent(LockHold::close);

    Awaitility.await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(ZooKeeperExtension.childrenOrNone(client, zk.path("sem/leases")))
                    .as("the lease granted after the caller gave up went back")
                    .isEmpty());
    proxy.setLatency(0);
    scheduler.late = false;
    semaphore.close();
    zk.assertNothingLeft();
  }

  @ParameterizedTest(name = "{0}, async {1}")
  @MethodSource("zeroBudgetCalls")
  void aZeroBudgetSpentOnStartingTheWork_stillGetsItsOneTry(Recipe recipe, boolean async)
      throws Exception {
    CuratorFramework client = zk.newClient();
    scheduler.late = false;
    SlowStartTicker ticker = new SlowStartTicker(Thread.currentThread());
    ClientTime.use(client, ticker, scheduler);

    Timed lock = recipe.make(client, zk.path("lock"));
    LockHold hold =
        async ? lock.acquireAsync(Duration.ZERO) : lock.tryHold(Duration.ZERO).orElse(null);
    long returnedAt = System.nanoTime();

    // The promise is one try with the grace from when it was sent, not a grant whatever the load:
    // the try (a create, its parents', a read; more for the semaphore and the composed lock) is
    // granted if the server answers within the grace, as it does in a few tens of milliseconds
    // here. On a loaded machine it once took longer (a free read lock came back empty, as every
    // recipe does with 100 ms more per round trip): the empty answer is then right, but only after
    // the try had its whole grace. Counting the grace from the deadline refused it at once, however
    // quick the server. The time is measured from when the caller first read the slowed clock,
    // before its work got under way; timers round the grace down to whole milliseconds.
    if (hold == null) {
      assertThat(millisFrom(ticker.callerStartedAt(), returnedAt))
          .as(
              "a free lock refused to a zero budget only once its try had the grace from when it"
                  + " was sent (the server answered slowly)")
          .isGreaterThanOrEqualTo(GRACE_MILLIS - 1);
    } else {
      hold.close();
    }
    lock.closer().close();
    zk.assertNothingLeft();
  }

  /**
   * Milliseconds from {@code readAt}, when the caller first read the test's moved clock (0: never,
   * which fails), to {@code returnedAt}.
   */
  private static long millisFrom(long readAt, long returnedAt) {
    assertThat(readAt).as("the caller read the moved clock").isNotZero();
    return TimeUnit.NANOSECONDS.toMillis(returnedAt - readAt);
  }

  static Stream<Arguments> zeroBudgetCalls() {
    return Stream.of(Recipe.values())
        .flatMap(recipe -> Stream.of(Arguments.of(recipe, false), Arguments.of(recipe, true)));
  }
}

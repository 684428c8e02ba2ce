package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A blocking caller whose budget ran out has the 200 ms grace counted from its deadline, not from
 * when it woke, and never waits past it for timers that run late. Here the caller wakes ten seconds
 * "late" (a ticker that jumps, as the clock does for a process frozen past its deadline), every
 * timer of the client runs five seconds after it is due (a starved scheduler), and ZooKeeper takes
 * 600 ms per round trip, so nothing answers within the budget or the grace: the call returns {@code
 * false} at once on waking. Before, it waited twice the grace for the timers, whatever its budget.
 * The withdrawn attempt leaves nothing behind once answers are quick again.
 */
@Timeout(60)
class LateWakeBudgetTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final long BUDGET_MILLIS = 200;

  /** The library's grace after a budget (docs/failure-semantics.md). */
  private static final long GRACE_MILLIS = 200;

  /** How the lock is made: plain, or lingering (its attempts go through its process's place). */
  enum Kind {
    MUTEX,
    LINGERING_MUTEX;

    ReentrantMutex newLock(CuratorFramework client, String path) {
      return this == MUTEX
          ? new ReentrantMutex(client, path)
          : ReentrantMutex.builder(client, path).linger(Duration.ofMillis(500)).build();
    }
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

  /** Real time, plus ten seconds once real time passes the moment it is told. */
  private static final class JumpingTicker implements LongSupplier {
    private volatile long jumpAt = Long.MAX_VALUE;

    void jumpAt(long nanos) {
      jumpAt = nanos;
    }

    @Override
    public long getAsLong() {
      long now = System.nanoTime();
      return now - jumpAt >= 0 ? now + TimeUnit.SECONDS.toNanos(10) : now;
    }
  }

  private final LateTimers scheduler = new LateTimers();

  @AfterEach
  void stopScheduler() {
    scheduler.shutdownNow(); // each test checks first that its timers left nothing behind
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aCallerThatWokeLate_withTimersRunningLate_answersAtOnce(Kind kind) throws Exception {
    TcpProxy proxy = zk.proxy();
    CuratorFramework client = zk.newClient(builder -> builder.connectString(proxy.connectString()));
    JumpingTicker ticker = new JumpingTicker();
    ClientTime.use(client, ticker, scheduler);
    ReentrantMutex lock = kind.newLock(client, zk.path("lock"));
    proxy.setLatency(300); // 600 ms a round trip: no answer within the budget or the grace

    long start = System.nanoTime();
    ticker.jumpAt(start + TimeUnit.MILLISECONDS.toNanos(BUDGET_MILLIS / 2));
    boolean acquired = lock.acquire(BUDGET_MILLIS, TimeUnit.MILLISECONDS);
    long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(acquired).isFalse();
    assertThat(tookMillis)
        .as("returned within the budget and the grace (the old bound, twice the grace, fails)")
        .isLessThan(BUDGET_MILLIS + GRACE_MILLIS);

    proxy.setLatency(0);
    scheduler.late = false;
    assertThat(lock.acquire(10, TimeUnit.SECONDS)).as("granted once answers are quick").isTrue();
    lock.release();
    lock.close();
    zk.assertNothingLeft(); // while the scheduler still runs the withdrawn attempt's cleanup
  }
}

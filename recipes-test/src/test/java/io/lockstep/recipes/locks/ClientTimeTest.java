package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A client's recipe objects read time from the ticker {@link ClientTime#use} gives them and run
 * their timers and notices on its scheduler: durations they report follow the ticker, budgets are
 * timed on the scheduler, listeners hear on its threads.
 */
@Timeout(60)
class ClientTimeTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** A test's scheduler: one named thread, and the delays it was asked for. */
  private static final class RecordingScheduler extends ScheduledThreadPoolExecutor {
    final List<Long> delaysMillis = new CopyOnWriteArrayList<>();

    RecordingScheduler() {
      super(1, task -> new Thread(task, "test-time"));
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      delaysMillis.add(unit.toMillis(delay));
      return super.schedule(command, delay, unit);
    }
  }

  private final AtomicLong ticker = new AtomicLong(42);
  private final RecordingScheduler scheduler = new RecordingScheduler();

  @AfterEach
  void stopScheduler() {
    scheduler.shutdownNow();
  }

  @Test
  void durationsFollowTheTicker_andListenersHearOnTheScheduler() throws Exception {
    CuratorFramework client = zk.newClient();
    ClientTime.use(client, ticker::get, scheduler);
    List<Duration> held = new CopyOnWriteArrayList<>();
    LockObservers.of(client)
        .addListener(
            new LockObserver() {
              @Override
              public void released(LockAttempt attempt, Duration duration, long fencingToken) {
                held.add(duration);
              }
            });
    ReentrantMutex mutex = new ReentrantMutex(client, zk.path("lock"));
    CompletableFuture<String> heldOn = new CompletableFuture<>();
    mutex
        .getStateListenable()
        .addListener(
            change -> {
              if (change.state() == LockState.HELD) {
                heldOn.complete(Thread.currentThread().getName());
              }
            });

    mutex.acquire();
    ticker.addAndGet(TimeUnit.SECONDS.toNanos(5));
    mutex.release();

    assertThat(heldOn.get(10, TimeUnit.SECONDS)).isEqualTo("test-time");
    assertThat(held).containsExactly(Duration.ofSeconds(5));
  }

  @Test
  void anAsynchronousBudget_isTimedOnTheScheduler_fromTheTicker() throws Exception {
    CuratorFramework holderClient = zk.newClient();
    ReentrantMutex holder = new ReentrantMutex(holderClient, zk.path("lock"));
    holder.acquire();
    CuratorFramework client = zk.newClient();
    ClientTime.use(client, ticker::get, scheduler);
    ReentrantMutex mutex = new ReentrantMutex(client, zk.path("lock"));

    CompletableFuture<LockHold> hold =
        mutex.acquireAsync(Duration.ofMillis(300)).toCompletableFuture();

    assertThatThrownBy(() -> hold.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(TimeoutException.class);
    // The ticker stood still: the whole budget was left when the timer was set.
    assertThat(scheduler.delaysMillis).contains(300L);
    holder.release();
    assertThat(mutex.getParticipantNodes()).isEmpty();
  }

  @Test
  void aClientWithRecipeObjects_keepsItsClock() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex mutex = new ReentrantMutex(client, zk.path("lock"));

    assertThatThrownBy(() -> ClientTime.use(client, ticker::get, scheduler))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("before the first recipe object");

    mutex.acquire();
    mutex.release();
    assertThat(scheduler.delaysMillis).isEmpty();
    assertThat(scheduler.getTaskCount()).isZero();
  }

  @Test
  void badInput_isRefusedByName() {
    CuratorFramework client = zk.newClient();

    assertThatThrownBy(() -> ClientTime.use(null, ticker::get, scheduler))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("client");
    assertThatThrownBy(() -> ClientTime.use(client, null, scheduler))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("ticker");
    assertThatThrownBy(() -> ClientTime.use(client, ticker::get, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("scheduler");
  }
}

package io.lockstep.recipes.internal.zk;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The default scheduler's threads stay bounded even when every task blocks on a future: the pool
 * starts spares for blocked tasks, but never more than {@link Background#MAX_THREADS} threads.
 */
@Timeout(60)
class BackgroundTest {
  private static long lockstepThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(thread -> thread.isAlive() && thread.getName().startsWith("lockstep-"))
        .count();
  }

  @Test
  void tasksBlockedOnAFuture_neverGrowThePoolPastItsBound() throws Exception {
    int tasks = 200;
    CompletableFuture<Void> gate = new CompletableFuture<>();
    CountDownLatch started = new CountDownLatch(tasks);
    CountDownLatch finished = new CountDownLatch(tasks);
    for (int i = 0; i < tasks; i++) {
      Background.INSTANCE.execute(
          () -> {
            started.countDown();
            gate.join(); // blocks a pool thread: the pool may compensate, within its bound
            finished.countDown();
          });
    }

    // Unbounded, every task would be blocked at once within this wait (one thread each).
    assertThat(started.await(2, TimeUnit.SECONDS)).as("all %d blocked at once", tasks).isFalse();
    long blocked = tasks - started.getCount();
    assertThat(blocked).as("blocked tasks got spares").isGreaterThan(Background.PARALLELISM);
    assertThat(blocked).as("tasks blocked at once").isLessThanOrEqualTo(Background.MAX_THREADS);
    assertThat(lockstepThreads())
        .as("live lockstep threads")
        .isLessThanOrEqualTo(Background.MAX_THREADS);
    gate.complete(null);
    assertThat(finished.await(30, TimeUnit.SECONDS)).as("every blocked task ran").isTrue();
  }

  @Test
  void aBurstOfQuickTasks_runsOnAtMostTheBound() throws Exception {
    int tasks = 10_000;
    CountDownLatch finished = new CountDownLatch(tasks);
    for (int i = 0; i < tasks; i++) {
      Background.INSTANCE.execute(finished::countDown);
    }
    assertThat(finished.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(lockstepThreads()).isLessThanOrEqualTo(Background.MAX_THREADS);
  }
}

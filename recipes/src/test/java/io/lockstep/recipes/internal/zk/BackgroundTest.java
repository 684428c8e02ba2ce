package io.lockstep.recipes.internal.zk;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The default scheduler's threads stay bounded even when every task blocks on a future: the pool
 * starts spares for blocked tasks, but never more than {@link Background#MAX_THREADS} threads.
 */
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
    CountDownLatch finished = new CountDownLatch(tasks);
    for (int i = 0; i < tasks; i++) {
      Background.INSTANCE.execute(
          () -> {
            gate.join(); // blocks a pool thread: the pool may compensate, within its bound
            finished.countDown();
          });
    }
    long most = 0;
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    while (System.nanoTime() < end) {
      most = Math.max(most, lockstepThreads());
      Thread.sleep(10);
    }

    assertThat(most)
        .as("live lockstep threads at most")
        .isLessThanOrEqualTo(Background.MAX_THREADS);
    assertThat(most).as("blocked tasks got spares").isGreaterThan(Background.PARALLELISM);
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

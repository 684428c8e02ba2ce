package io.lockstep.recipes.locks.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.MultiMutex;
import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A thousand cycles of each recipe, mixing successes, timeouts, early interrupts and cancelled
 * waits: the server's node count and watch count afterwards equal those before.
 */
@Timeout(180)
class LeakTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final int CYCLES = 1_000;

  /** Each recipe, as the lock that waits and the lock that blocks it. */
  enum Recipe {
    REENTRANT_MUTEX((c, p) -> new ReentrantMutex(c, p), (c, p) -> new ReentrantMutex(c, p)),
    NON_REENTRANT_MUTEX((c, p) -> new NonReentrantMutex(c, p), (c, p) -> new ReentrantMutex(c, p)),
    READ_LOCK(
        (c, p) -> new ReadWriteMutex(c, p).readLock(),
        (c, p) -> new ReadWriteMutex(c, p).writeLock()),
    WRITE_LOCK(
        (c, p) -> new ReadWriteMutex(c, p).writeLock(),
        (c, p) -> new ReadWriteMutex(c, p).readLock()),
    MULTI_MUTEX(
        (c, p) -> new MultiMutex(c, List.of(p, p + "-2", p + "-3")),
        (c, p) -> new ReentrantMutex(c, p + "-3")),
    REENTRANT_MUTEX_LOCAL_HANDOFF(
        (c, p) -> ReentrantMutex.builder(c, p).localHandoff(2).build(),
        (c, p) -> new ReentrantMutex(c, p)),
    NON_REENTRANT_MUTEX_LOCAL_HANDOFF(
        (c, p) -> NonReentrantMutex.builder(c, p).localHandoff(2).build(),
        (c, p) -> new ReentrantMutex(c, p)),
    READ_LOCK_SHARED(
        (c, p) -> ReadWriteMutex.builder(c, p).localHandoff(2).build().readLock(),
        (c, p) -> new ReadWriteMutex(c, p).writeLock()),
    WRITE_LOCK_LOCAL_HANDOFF(
        (c, p) -> ReadWriteMutex.builder(c, p).localHandoff(2).build().writeLock(),
        (c, p) -> new ReadWriteMutex(c, p).readLock());

    final BiFunction<CuratorFramework, String, FencedLock> waiter;
    final BiFunction<CuratorFramework, String, FencedLock> blocker;

    Recipe(
        BiFunction<CuratorFramework, String, FencedLock> waiter,
        BiFunction<CuratorFramework, String, FencedLock> blocker) {
      this.waiter = waiter;
      this.blocker = blocker;
    }
  }

  private ExecutorService waiterThread;

  @BeforeEach
  void startWaiterThread() {
    waiterThread = Executors.newSingleThreadExecutor();
  }

  @AfterEach
  void stopWaiterThread() {
    waiterThread.shutdownNow();
  }

  @ParameterizedTest
  @EnumSource(Recipe.class)
  void thousandMixedCycles_leaveTheServersNodeAndWatchCountsUnchanged(Recipe recipe)
      throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    for (String dir : List.of(path, path + "-2", path + "-3")) {
      client.create().creatingParentsIfNeeded().forPath(dir); // persistent: never reaped
    }
    FencedLock lock = recipe.waiter.apply(client, path);
    FencedLock blocker = recipe.blocker.apply(zk.newClient(), path);
    Map<String, Long> before = counts();
    Random random = new Random(42);
    int successes = 0;
    int timeouts = 0;
    int interrupts = 0;
    int cancelled = 0;

    for (int i = 0; i < 600; i++) {
      lock.acquire();
      lock.release();
      successes++;
    }
    blocker.acquire();
    int blockerNodes = queued(client, path);
    for (int i = 600; i < CYCLES; i++) {
      switch (i % 4) {
        case 0:
          assertThat(lock.acquire(random.nextInt(3) == 0 ? 0 : 10, TimeUnit.MILLISECONDS))
              .isFalse();
          timeouts++;
          break;
        case 1:
          interruptEarly(lock, random.nextInt(3));
          interrupts++;
          break;
        default:
          cancelWhileWaiting(lock, () -> queued(client, path) > blockerNodes);
          cancelled++;
      }
    }
    blocker.release();

    assertThat(successes + timeouts + interrupts + cancelled).isEqualTo(CYCLES);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(counts()).isEqualTo(before));
  }

  /** Starts an acquire and interrupts it a moment later, whatever step it is at. */
  private void interruptEarly(FencedLock lock, int delayMillis) throws Exception {
    Future<?> waiting = waiterThread.submit(() -> lock.acquire(30, TimeUnit.SECONDS));
    TimeUnit.MILLISECONDS.sleep(delayMillis); // the point is to land at a random step
    waiting.cancel(true);
    awaitEnd(waiting);
  }

  /** Starts an acquire, waits until it is queued, then cancels it. */
  private void cancelWhileWaiting(FencedLock lock, Callable<Boolean> queued) throws Exception {
    Future<?> waiting = waiterThread.submit(() -> lock.acquire(30, TimeUnit.SECONDS));
    await().pollInterval(Duration.ofMillis(2)).until(() -> queued.call() || waiting.isDone());
    waiting.cancel(true);
    awaitEnd(waiting);
  }

  /** Waits until the cancelled task has really finished, so the next one starts clean. */
  private void awaitEnd(Future<?> waiting) throws Exception {
    Future<?> barrier = waiterThread.submit(() -> {});
    try {
      barrier.get(10, TimeUnit.SECONDS);
      waiting.get(0, TimeUnit.SECONDS);
    } catch (CancellationException | ExecutionException expected) {
      // cancelled (interrupted) or refused: both are outcomes we mean to mix in
    }
    assertThat(waiting.isDone()).isTrue();
  }

  /** Nodes queued in all of the test's lock directories. */
  private static int queued(CuratorFramework client, String path) throws Exception {
    int nodes = 0;
    for (String dir : List.of(path, path + "-2", path + "-3")) {
      nodes += client.getChildren().forPath(dir).size();
    }
    return nodes;
  }

  private Map<String, Long> counts() {
    var stats = zk.stats();
    return Map.of(
        "zk_znode_count", stats.monitor("zk_znode_count"),
        "zk_watch_count", stats.monitor("zk_watch_count"),
        "zk_ephemerals_count", stats.monitor("zk_ephemerals_count"));
  }
}

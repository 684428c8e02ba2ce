package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** One atomic enqueue over several paths: no deadlock, 3 requests, nothing left behind. */
@Timeout(90)
class MultiMutexTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private List<String> paths(int count) {
    List<String> paths = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      paths.add(zk.path("p" + i));
    }
    return paths;
  }

  private List<String> nodesIn(CuratorFramework client, List<String> paths) throws Exception {
    List<String> nodes = new ArrayList<>();
    for (String path : paths) {
      try {
        for (String child : client.getChildren().forPath(path)) {
          nodes.add(path + "/" + child);
        }
      } catch (KeeperException.NoNodeException reaped) {
        // no directory (the server reaps an emptied one at any time): no node in it
      }
    }
    return nodes;
  }

  @Test
  void reversedAndShuffledPathOrders_neverDeadlock_andNeverShareAPath() throws Exception {
    List<String> paths = paths(4);
    long seed = System.nanoTime();
    System.out.println("MultiMutexTest seed " + seed);
    Random random = new Random(seed);
    AtomicIntegerArray inside = new AtomicIntegerArray(paths.size());
    AtomicInteger violations = new AtomicInteger();
    AtomicInteger rounds = new AtomicInteger();
    List<LockThread> threads = new ArrayList<>();
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (int c = 0; c < 4; c++) {
      CuratorFramework client = zk.newClient();
      List<List<Integer>> orders = new ArrayList<>();
      for (int round = 0; round < 12; round++) {
        List<Integer> order = new ArrayList<>(List.of(0, 1, 2, 3));
        if (c % 2 == 0) {
          Collections.reverse(order);
        } else {
          Collections.shuffle(order, random);
        }
        orders.add(order.subList(0, 2 + random.nextInt(3)));
      }
      LockThread thread = new LockThread("multi-" + c);
      threads.add(thread);
      done.add(
          thread.run(
              () -> {
                for (List<Integer> order : orders) {
                  List<String> chosen = new ArrayList<>();
                  order.forEach(i -> chosen.add(paths.get(i)));
                  MultiMutex lock = new MultiMutex(client, chosen);
                  lock.acquire();
                  try {
                    order.forEach(
                        i -> {
                          if (inside.incrementAndGet(i) > 1) {
                            violations.incrementAndGet();
                          }
                        });
                    order.forEach(inside::decrementAndGet);
                    rounds.incrementAndGet();
                  } finally {
                    lock.release();
                  }
                }
              }));
    }
    try {
      CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    } finally {
      threads.forEach(LockThread::close);
    }
    assertThat(rounds).hasValue(4 * 12);
    assertThat(violations).as("seed %d", seed).hasValue(0);
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 4, 8, 16})
  void uncontendedCycle_costsThreeRequests_whateverTheNumberOfPaths(int count) throws Exception {
    CuratorFramework client = zk.newClient();
    List<String> paths = paths(count);
    for (String path : paths) {
      client.create().creatingParentsIfNeeded().forPath(path);
    }
    MultiMutex lock = new MultiMutex(client, paths);
    long before = zk.requestsSoFar(client);

    lock.acquire();
    lock.release();

    assertThat(zk.requestsSoFar(client) - before).isEqualTo(3);
  }

  @Test
  void curatorsMultiLock_costsThreeRequestsPerPath() throws Exception {
    CuratorFramework client = zk.newClient();
    List<String> paths = paths(4);
    for (String path : paths) {
      client.create().creatingParentsIfNeeded().forPath(path);
    }
    InterProcessMultiLock curator = new InterProcessMultiLock(client, paths);
    long before = zk.requestsSoFar(client);

    curator.acquire();
    curator.release();

    assertThat(zk.requestsSoFar(client) - before).isEqualTo(3 * 4);
  }

  @Test
  void timeoutAcrossSeveralPaths_returnsFalse_andLeavesNoNodeAnywhere() throws Exception {
    CuratorFramework admin = zk.newClient();
    List<String> paths = paths(5);
    ReentrantMutex holder = new ReentrantMutex(zk.newClient(), paths.get(2));
    holder.acquire();
    MultiMutex multi = new MultiMutex(zk.newClient(), paths);

    assertThat(multi.acquire(300, TimeUnit.MILLISECONDS)).isFalse();

    await().untilAsserted(() -> assertThat(nodesIn(admin, paths)).hasSize(1));
    holder.release();
  }

  @Test
  void interruptWhileWaitingOnTheThirdOfFivePaths_leavesNoNodeAnywhere() throws Exception {
    CuratorFramework admin = zk.newClient();
    List<String> paths = paths(5);
    ReentrantMutex holder = new ReentrantMutex(zk.newClient(), paths.get(2));
    holder.acquire();
    MultiMutex multi = new MultiMutex(zk.newClient(), paths);
    try (LockThread thread = new LockThread("multi")) {
      CompletableFuture<Void> waiting = thread.run(multi::acquire);
      await().until(() -> nodesIn(admin, paths).size() == 6);

      thread.thread().interrupt();

      assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(InterruptedException.class);
    }
    await().untilAsserted(() -> assertThat(nodesIn(admin, paths)).hasSize(1));
    holder.release();
  }

  @Test
  void fencingToken_isTheEnqueuingTransactionsZxid_sharedByEveryNode() throws Exception {
    CuratorFramework client = zk.newClient();
    List<String> paths = paths(3);
    MultiMutex lock = new MultiMutex(client, paths);
    lock.acquire();

    for (String node : lock.getParticipantNodes()) {
      Stat stat = client.checkExists().forPath(node);
      assertThat(stat.getCzxid()).isEqualTo(lock.fencingToken());
    }
    assertThat(lock.ownershipChecks()).hasSize(3);
    List<CuratorOp> ops = new ArrayList<>(lock.ownershipChecks());
    ops.add(client.transactionOp().create().forPath(zk.path("written")));
    client.transaction().forOperations(ops);
    lock.release();
  }

  @Test
  void aLockDirectoryReapedBeforeTheCreate_isMadeAgain_withTheNodesInOneMulti() throws Exception {
    CuratorFramework admin = zk.newClient();
    List<String> paths = List.of(zk.path("deep/a"), zk.path("deep/b"));
    for (String path : paths) {
      admin
          .create()
          .creatingParentContainersIfNeeded()
          .withMode(CreateMode.CONTAINER)
          .forPath(path);
    }
    AtomicBoolean reaped = new AtomicBoolean();
    CuratorFramework reaping = reapingOnce(zk.newClient(), admin, paths.get(1), reaped);
    MultiMutex lock = new MultiMutex(reaping, paths);

    lock.acquire();

    assertThat(reaped).as("a directory was deleted just before the enqueuing create").isTrue();
    assertThat(nodesIn(admin, paths)).hasSize(2);
    lock.release();
  }

  /**
   * A client that, the first time the engine prepares its enqueuing create while {@code victim} (a
   * lock directory) exists, deletes {@code victim}: what the server's container reaper can do
   * between another lock's release and our create. (The engine resolves its creates through {@code
   * transactionOp()}, which is how the hook sees the moment.)
   */
  private static CuratorFramework reapingOnce(
      CuratorFramework client, CuratorFramework admin, String victim, AtomicBoolean reaped) {
    InvocationHandler handler =
        (proxy, method, args) -> {
          if (method.getName().equals("transactionOp")
              && !reaped.get()
              && admin.checkExists().forPath(victim) != null
              && reaped.compareAndSet(false, true)) {
            admin.delete().forPath(victim);
          }
          try {
            return method.invoke(client, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        };
    return (CuratorFramework)
        Proxy.newProxyInstance(
            CuratorFramework.class.getClassLoader(),
            new Class<?>[] {CuratorFramework.class},
            handler);
  }

  @Test
  void readModePaths_shareWithReadersOfTheSamePath_writeModeExcludesThem() throws Exception {
    MultiMutex first =
        MultiMutex.builder(zk.newClient()).read(zk.path("rates")).mutex(zk.path("a")).build();
    MultiMutex second =
        MultiMutex.builder(zk.newClient()).read(zk.path("rates")).mutex(zk.path("b")).build();
    ReadWriteMutex rates = new ReadWriteMutex(zk.newClient(), zk.path("rates"));

    first.acquire();
    assertThat(second.acquire(5, TimeUnit.SECONDS)).isTrue();
    assertThat(rates.writeLock().acquire(200, TimeUnit.MILLISECONDS)).isFalse();
    first.release();
    second.release();
    assertThat(rates.writeLock().acquire(5, TimeUnit.SECONDS)).isTrue();
    rates.writeLock().release();
  }

  @Test
  void composed_failureOfTheSecondLock_releasesTheFirst() throws Exception {
    CuratorFramework admin = zk.newClient();
    ReentrantMutex first = new ReentrantMutex(zk.newClient(), zk.path("a"));
    ReentrantMutex third = new ReentrantMutex(zk.newClient(), zk.path("c"));
    MultiMutex composed = new MultiMutex(List.of(first, new FailingLock(true, false), third));

    assertThatThrownBy(composed::acquire)
        .isInstanceOf(LockException.class)
        .hasMessageContaining("refused");

    assertThat(first.isAcquiredInThisProcess()).isFalse();
    assertThat(third.isAcquiredInThisProcess()).isFalse();
    assertThat(nodesIn(admin, List.of(zk.path("a"), zk.path("c")))).isEmpty();
  }

  @Test
  void composed_release_releasesEveryLock_andReportsEveryFailure() throws Exception {
    ReentrantMutex first = new ReentrantMutex(zk.newClient(), zk.path("a"));
    ReentrantMutex last = new ReentrantMutex(zk.newClient(), zk.path("c"));
    MultiMutex composed =
        new MultiMutex(
            List.of(first, new FailingLock(false, true), new FailingLock(false, true), last));
    composed.acquire();

    assertThatThrownBy(composed::release)
        .isInstanceOf(LockException.class)
        .satisfies(e -> assertThat(e.getSuppressed()).hasSize(1));

    assertThat(first.isAcquiredInThisProcess()).isFalse();
    assertThat(last.isAcquiredInThisProcess()).isFalse();
  }

  @Test
  void composed_budgetCoversAllLocks_andWhatWasTakenIsReleased() throws Exception {
    CuratorFramework admin = zk.newClient();
    ReentrantMutex holder = new ReentrantMutex(zk.newClient(), zk.path("b"));
    holder.acquire();
    ReentrantMutex first = new ReentrantMutex(zk.newClient(), zk.path("a"));
    ReentrantMutex second = new ReentrantMutex(zk.newClient(), zk.path("b"));
    MultiMutex composed = new MultiMutex(List.of(first, second));

    long start = System.nanoTime();
    assertThat(composed.acquire(300, TimeUnit.MILLISECONDS)).isFalse();
    long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(elapsed).isLessThan(300 + 2_000);
    assertThat(first.isAcquiredInThisProcess()).isFalse();
    await().untilAsserted(() -> assertThat(nodesIn(admin, List.of(zk.path("a")))).isEmpty());
    holder.release();
  }

  /** A lock that fails on acquire or on release, as a broken component would. */
  private static final class FailingLock implements InterProcessLock {
    private final boolean failAcquire;
    private final boolean failRelease;
    private boolean held;

    FailingLock(boolean failAcquire, boolean failRelease) {
      this.failAcquire = failAcquire;
      this.failRelease = failRelease;
    }

    @Override
    public void acquire() throws Exception {
      if (failAcquire) {
        throw new java.io.IOException("refused");
      }
      held = true;
    }

    @Override
    public boolean acquire(long time, TimeUnit unit) throws Exception {
      acquire();
      return true;
    }

    @Override
    public void release() throws Exception {
      held = false;
      if (failRelease) {
        throw new java.io.IOException("release failed");
      }
    }

    @Override
    public boolean isAcquiredInThisProcess() {
      return held;
    }
  }
}

package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lock caching on a real server: a mutex built with {@code linger} keeps its process's place after
 * the last local release while nobody else queues, and gives it back when someone does, when the
 * linger runs out, or when the place is lost. The server-less table is PlaceLingerTest; here each
 * phase meets the events that come over the wire (a test per cell):
 *
 * <pre>
 * phase \ event       | other queues (ours / Curator's) | local acquire | session expiry | client close | linger runs out
 * lingering           | given back; it holds (both)     | held, 0 req.  | given back     | given back   | given back
 * held after lingering| given back at the release       | waits, handoff| lost, as usual | lost         | nothing
 * given back          | (its node deleted)              | a new place   | -              | -            | timer ignored
 * </pre>
 *
 * And no watch is left after a give-back: the extension checks after each test that no node and no
 * watch remain.
 */
@Timeout(60)
class LingerTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final Duration LONG = Duration.ofMinutes(1);

  private static ReentrantMutex lingering(CuratorFramework client, String path, Duration linger) {
    return ReentrantMutex.builder(client, path).localHandoff().linger(linger).build();
  }

  // ---- lingering x local acquire ----

  @Test
  void aLoopAlone_sendsNoRequestAfterItsFirstCycle_andKeepsOneNodeAndOneWatch() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = lingering(client, path, LONG);
    lock.acquire();
    String node = client.getChildren().forPath(path).get(0);
    lock.release();
    long before = zk.requestsSoFar(client);

    for (int i = 0; i < 200; i++) {
      lock.acquire();
      lock.release();
    }

    assertThat(zk.requestsSoFar(client) - before).as("200 cycles alone").isZero();
    assertThat(client.getChildren().forPath(path)).as("the kept place").containsExactly(node);
    assertThat(zk.stats().watchedPaths(Sessions.id(client))).as("no data watch").isEmpty();
    assertThat(serverWatches()).as("the granting read's child watch (wchp omits it)").isEqualTo(1);
    giveBackThroughCurator(path);
  }

  @Test
  void aHoldAfterALinger_isAnAcquisitionLikeAnyOtherForObservers() throws Exception {
    CuratorFramework client = zk.newClient();
    AtomicInteger granted = new AtomicInteger();
    AtomicInteger released = new AtomicInteger();
    LockObservers.of(client)
        .addListener(
            new LockObserver() {
              @Override
              public void attemptEnded(
                  LockAttempt attempt, AcquireOutcome outcome, Duration waited, long token) {
                if (outcome == AcquireOutcome.GRANTED) {
                  granted.incrementAndGet();
                }
              }

              @Override
              public void released(LockAttempt attempt, Duration held, long token) {
                released.incrementAndGet();
              }
            });
    ReentrantMutex lock = lingering(client, zk.path("lock"), LONG);
    for (int i = 0; i < 5; i++) {
      lock.acquire();
      lock.release();
    }
    await().until(() -> released.get() == 5);
    assertThat(granted).hasValue(5);
    giveBackThroughCurator(zk.path("lock"));
  }

  @Test
  void nonReentrantMutexes_lingerToo_andTwoLockObjectsShareThePlace() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    NonReentrantMutex a = NonReentrantMutex.builder(client, path).linger(LONG).build();
    NonReentrantMutex b = NonReentrantMutex.builder(client, path).linger(LONG).build();
    a.acquire();
    a.release();
    long before = zk.requestsSoFar(client);

    b.acquire();
    b.release();
    a.acquire();
    a.release();

    assertThat(zk.requestsSoFar(client) - before).as("linger implies local handoff").isZero();
    giveBackThroughCurator(path);
  }

  // ---- lingering x another process queues ----

  @Test
  void aCuratorWaiter_getsTheLockAfterTheGiveBack_everyTime() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = lingering(client, path, LONG);
    InterProcessMutex curator = new InterProcessMutex(zk.newClient(), path);

    for (int i = 0; i < 10; i++) {
      lock.acquire();
      lock.release();
      assertThat(lock.getParticipantNodes())
          .as(
              i == 0
                  ? "kept, round 0"
                  : "round %d: another process was seen, the place is not kept for a while",
              i)
          .hasSize(i == 0 ? 1 : 0);
      assertThat(curator.acquire(10, TimeUnit.SECONDS)).as("round %d", i).isTrue();
      curator.release();
    }
  }

  @Test
  void twoProcessesTakingTurns_payNoMoreRequestsWithLinger_thanWithout() throws Exception {
    String path = zk.path("lock");
    CuratorFramework clientA = zk.newClient();
    CuratorFramework clientB = zk.newClient();
    // a persistent directory: an empty container could be reaped between turns, and made again
    clientA.create().creatingParentsIfNeeded().forPath(path);
    ReentrantMutex a = lingering(clientA, path, LONG);
    ReentrantMutex b = lingering(clientB, path, LONG);
    for (int i = 0; i < 3; i++) { // the first turns: each is seen by the other
      turn(a);
      turn(b);
    }
    long before = zk.requestsSoFar(clientA) + zk.requestsSoFar(clientB);

    int rounds = 20;
    for (int i = 0; i < rounds; i++) {
      turn(a);
      turn(b);
    }

    long requests = zk.requestsSoFar(clientA) + zk.requestsSoFar(clientB) - before;
    assertThat(requests)
        .as("create, read, delete per acquisition, as a plain mutex (was 3.8 with the place kept)")
        .isEqualTo(3L * 2 * rounds);
  }

  private static void turn(ReentrantMutex lock) throws Exception {
    lock.acquire();
    lock.release();
  }

  @Test
  void aCuratorWaiter_isNeverStarved_byALocalThreadLoopingOnTheKeptPlace() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = lingering(client, path, LONG);
    InterProcessMutex curator = new InterProcessMutex(zk.newClient(), path);
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger cycles = new AtomicInteger();
    Thread looper =
        new Thread(
            () -> {
              while (!stop.get()) {
                try {
                  lock.acquire();
                  lock.release();
                  cycles.incrementAndGet();
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              }
            });
    looper.start();
    try {
      for (int i = 0; i < 10; i++) {
        int seen = cycles.get();
        await().until(() -> cycles.get() > seen + 10); // the loop runs on the kept place
        assertThat(curator.acquire(10, TimeUnit.SECONDS)).as("round %d", i).isTrue();
        curator.release();
      }
    } finally {
      stop.set(true);
      looper.join(10_000);
    }
    assertThat(looper.isAlive()).isFalse();
    await().until(() -> lock.getParticipantNodes().size() <= 1);
    giveBackThroughCurator(path);
  }

  @Test
  void anotherLockstepProcess_getsTheLock_withAGreaterTokenThanEveryLocalHold() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = lingering(client, path, LONG);
    ReentrantMutex other = new ReentrantMutex(zk.newClient(), path);
    LockHold first = lock.hold();
    long firstToken = first.fencingToken();
    first.close();
    LockHold second = lock.hold(); // from the kept place: its token needs a write
    long secondToken = second.fencingToken();
    second.close();

    LockHold remote = other.tryHold(Duration.ofSeconds(10)).orElseThrow();

    assertThat(secondToken).isGreaterThan(firstToken);
    assertThat(remote.fencingToken()).isGreaterThan(secondToken);
    remote.close();
  }

  @Test
  void anotherProcessQueuingWhileALocalThreadHolds_getsTheLockAtItsRelease() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = lingering(client, path, LONG);
    ReentrantMutex other = new ReentrantMutex(zk.newClient(), path);
    lock.acquire();
    lock.release();
    LockHold local = lock.hold(); // held after lingering
    CompletableFuture<LockHold> remote = other.acquireAsync().toCompletableFuture();
    await().until(() -> client.getChildren().forPath(path).size() == 2);

    assertThat(remote).isNotDone();
    local.close();

    remote.get(10, TimeUnit.SECONDS).close();
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  // ---- fencing and checks across a linger ----

  @Test
  void checksOfAHoldThatLetGo_failOnceTheNextLocalHoldIsGranted() throws Exception {
    CuratorFramework client = zk.newClient();
    String data = zk.path("data");
    client.create().creatingParentsIfNeeded().forPath(data, new byte[0]);
    ReentrantMutex lock = lingering(client, zk.path("lock"), LONG);
    LockHold first = lock.hold();
    List<CuratorOp> stale = new ArrayList<>(first.ownershipChecks());
    first.close();

    LockHold second = lock.hold(); // the kept place is written first: the old checks fail

    stale.add(client.transactionOp().setData().forPath(data, new byte[] {1}));
    assertThatThrownBy(() -> client.transaction().forOperations(stale))
        .isInstanceOf(KeeperException.BadVersionException.class);
    second.close();
    giveBackThroughCurator(zk.path("lock"));
  }

  // ---- lingering x the place's end ----

  @Test
  void theLingerRunsOut_andThePlaceGoesBack() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = lingering(client, path, Duration.ofMillis(200));
    lock.acquire();
    lock.release();

    await().until(() -> lock.getParticipantNodes().isEmpty());
    await("its child watch went with its node").until(() -> serverWatches() == 0);
    lock.acquire(); // a new place
    assertThat(lock.getParticipantNodes()).hasSize(1);
    lock.release();
    await().until(() -> lock.getParticipantNodes().isEmpty());
  }

  @Test
  void sessionExpiryWhileLingering_givesThePlaceBack_andTheNextAcquireTakesANewOne()
      throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = lingering(client, path, LONG);
    LockHold first = lock.hold();
    long firstToken = first.fencingToken();
    String kept = client.getChildren().forPath(path).get(0);
    first.close();

    long session = Sessions.expire(client, zk.server().getConnectString());
    await()
        .until(() -> Sessions.id(client) != session && client.getZookeeperClient().isConnected());

    LockHold second = lock.tryHold(Duration.ofSeconds(30)).orElseThrow();
    assertThat(second.state()).isEqualTo(LockState.HELD);
    assertThat(lock.getParticipantNodes()).hasSize(1).noneMatch(node -> node.endsWith(kept));
    assertThat(second.fencingToken()).isGreaterThan(firstToken);
    second.close();
    giveBackThroughCurator(path);
  }

  @Test
  void aConnectionLostWhileLingering_givesThePlaceBack_andTheNextAcquireTakesANewOne()
      throws Exception {
    try (TcpProxy proxy = TcpProxy.start("127.0.0.1", zk.server().getPort())) {
      CuratorFramework client = zk.newClient(b -> b.connectString(proxy.connectString()));
      CuratorFramework observer = zk.newClient();
      String path = zk.path("lock");
      ReentrantMutex lock = lingering(client, path, LONG);
      lock.acquire();
      String kept = observer.getChildren().forPath(path).get(0);
      lock.release();
      List<ConnectionState> states = new CopyOnWriteArrayList<>();
      client.getConnectionStateListenable().addListener((c, state) -> states.add(state));

      proxy.cut();
      await().until(() -> states.contains(ConnectionState.SUSPENDED));
      proxy.heal();
      await().until(() -> states.contains(ConnectionState.RECONNECTED));

      await("given back once the place was at risk")
          .until(() -> !children(observer, path).contains(kept));
      lock.acquire();
      assertThat(children(observer, path)).hasSize(1).doesNotContain(kept);
      lock.release();
      giveBackThroughCurator(path);
    }
  }

  @Test
  void clientCloseWhileLingering_endsThePlace_andLaterAcquiresFail() throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework observer = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = lingering(client, path, LONG);
    lock.acquire();
    lock.release();

    client.close();

    await().until(() -> children(observer, path).isEmpty());
    assertThatThrownBy(() -> lock.acquireAsync().toCompletableFuture().get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(LockException.class);
  }

  @Test
  void ourNodeDeletedWhileLingering_givesThePlaceBack_andTheNextAcquireTakesANewOne()
      throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework observer = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = lingering(client, path, LONG);
    lock.acquire();
    String kept = client.getChildren().forPath(path).get(0);
    lock.release();

    observer.delete().forPath(path + "/" + kept); // fires the kept place's child watch
    await().until(() -> !lock.isAcquiredInThisProcess() && lock.getParticipantNodes().isEmpty());

    lock.acquire();
    assertThat(client.getChildren().forPath(path)).hasSize(1).doesNotContain(kept);
    lock.release();
    giveBackThroughCurator(path);
  }

  // ---- the option ----

  @Test
  void badLingers_areRefused_namingTheArgument() {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    assertThatThrownBy(() -> ReentrantMutex.builder(client, path).linger(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("linger");
    for (Duration bad : List.of(Duration.ZERO, Duration.ofMillis(-1), Duration.ofDays(2))) {
      assertThatThrownBy(() -> ReentrantMutex.builder(client, path).linger(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("linger");
      assertThatThrownBy(() -> NonReentrantMutex.builder(client, path).linger(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("linger");
    }
    ReentrantMutex lock = ReentrantMutex.builder(client, path).linger(LONG).build();
    assertThatThrownBy(() -> lock.makeRevocable(l -> {}))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  /**
   * A Curator waiter on another client takes the lock (the kept place goes back for it) and lets
   * go: nothing of ours is left, and the test's leak check finds no node and no watch.
   */
  private static void giveBackThroughCurator(String path) throws Exception {
    InterProcessMutex curator = new InterProcessMutex(zk.newClient(), path);
    assertThat(curator.acquire(10, TimeUnit.SECONDS)).isTrue();
    curator.release();
    await("no child watch left").until(() -> serverWatches() == 0);
  }

  /**
   * Watches on the server, child watches included ({@code mntr}'s {@code zk_watch_count}; {@code
   * wchp} lists data watches only).
   */
  private static long serverWatches() {
    return zk.stats().monitor("zk_watch_count");
  }

  private static List<String> children(CuratorFramework client, String path) throws Exception {
    try {
      return client.getChildren().forPath(path);
    } catch (KeeperException.NoNodeException containerRemoved) {
      return List.of();
    }
  }
}

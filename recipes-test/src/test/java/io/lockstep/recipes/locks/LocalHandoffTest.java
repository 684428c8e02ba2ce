package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Cohort locking: the holds of one process take turns on one node in memory, bounded while another
 * participant waits; fencing stays strictly increasing; loss and Curator interop as without it.
 */
@Timeout(120)
class LocalHandoffTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void localContenders_takeTurnsOnOneNode_andALocalHandoffSendsNothing() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = ReentrantMutex.builder(client, zk.path("lock")).localHandoff().build();
    ReentrantMutex sibling = ReentrantMutex.builder(client, zk.path("lock")).localHandoff().build();

    LockHold first = lock.hold();
    CompletableFuture<LockHold> second = sibling.acquireAsync().toCompletableFuture();
    CompletableFuture<LockHold> third = lock.acquireAsync().toCompletableFuture();
    assertThat(client.getChildren().forPath(zk.path("lock")))
        .as("one node for the process")
        .hasSize(1);
    long before = zk.requestsSoFar(client);

    first.close();
    LockHold secondHold = second.get(10, TimeUnit.SECONDS);
    assertThat(third).isNotDone();
    secondHold.close();
    third.get(10, TimeUnit.SECONDS).close();

    assertThat(zk.requestsSoFar(client) - before)
        .as("two local handoffs, then the node's delete")
        .isEqualTo(1);
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  @Test
  void anotherProcessWaits_atMostTheBoundOfLocalHandoffsInARow() throws Exception {
    CuratorFramework local = zk.newClient();
    ReentrantMutex lock = ReentrantMutex.builder(local, zk.path("lock")).localHandoff(2).build();
    ReentrantMutex remote = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    List<String> order = new CopyOnWriteArrayList<>();
    Map<String, CompletableFuture<LockHold>> holds = new ConcurrentHashMap<>();

    LockHold first = lock.hold();
    for (int i = 1; i <= 5; i++) {
      holds.put("local" + i, recorded(lock, "local" + i, order));
    }
    holds.put("remote", recorded(remote, "remote", order));
    await().until(() -> local.getChildren().forPath(zk.path("lock")).size() == 2);
    eventThreadCaughtUp(local); // the process has heard that someone queued behind it

    first.close();
    closeInTurn(holds, order, 0, 6);

    assertThat(order).containsExactly("local1", "local2", "remote", "local3", "local4", "local5");
  }

  @Test
  void aWaiterTheProcessHasNotHeardOf_isFoundByTheReadAtTheBound() throws Exception {
    CuratorFramework local = zk.newClient();
    CuratorFramework observer = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = ReentrantMutex.builder(local, path).localHandoff(2).build();
    ReentrantMutex remote = new ReentrantMutex(zk.newClient(), path);
    List<String> order = new CopyOnWriteArrayList<>();
    Map<String, CompletableFuture<LockHold>> holds = new ConcurrentHashMap<>();

    LockHold first = lock.hold(); // found alone: only its child watch would tell of a newcomer
    for (int i = 1; i <= 4; i++) {
      holds.put("local" + i, recorded(lock, "local" + i, order));
    }
    CountDownLatch resume = new CountDownLatch(1);
    stallEventThread(local, resume); // the newcomer's child event waits behind this, unheard
    holds.put("remote", recorded(remote, "remote", order));
    await().until(() -> observer.getChildren().forPath(path).size() == 2);

    first.close();
    // the second handoff reaches the bound and sends a read whose answer waits behind the stalled
    // thread too: the place may not be passed on before it arrives
    closeInTurn(holds, order, 0, 2);
    resume.countDown();
    closeInTurn(holds, order, 2, 5);

    assertThat(order).containsExactly("local1", "local2", "remote", "local3", "local4");
  }

  @Test
  void aPlaceThatFindsItselfAloneAtTheBound_isPassedOnAgain_oneReadPerBound() throws Exception {
    CuratorFramework local = zk.newClient();
    CuratorFramework observer = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = ReentrantMutex.builder(local, path).localHandoff(1).build();
    ReentrantMutex remote = new ReentrantMutex(zk.newClient(), path);
    remote.acquire();
    CompletableFuture<LockHold> first = lock.acquireAsync().toCompletableFuture();
    await().until(() -> observer.getChildren().forPath(path).size() == 2);
    remote.release(); // the first place is granted behind another process: someone was there

    List<String> places = new ArrayList<>(); // the process's node during each hold
    LockHold hold = first.get(10, TimeUnit.SECONDS);
    long before = 0;
    for (int i = 0; i < 9; i++) {
      places.add(observer.getChildren().forPath(path).get(0));
      if (i == 4) {
        before = zk.requestsSoFar(local);
      }
      CompletableFuture<LockHold> next = lock.acquireAsync().toCompletableFuture();
      hold.close();
      hold = next.get(10, TimeUnit.SECONDS);
    }
    long checks = zk.requestsSoFar(local) - before;
    hold.close();

    // place 1 followed the other process; place 2's read left no child watch (the lock had seen a
    // queue), so it cannot know it is alone; place 3 found itself alone and watched: at each bound
    // a read finds it alone still, and it keeps its place
    assertThat(places.subList(0, 2)).containsOnly(places.get(0));
    assertThat(places.subList(2, 4)).containsOnly(places.get(2));
    assertThat(places.subList(4, 9)).containsOnly(places.get(4));
    assertThat(Set.copyOf(places)).hasSize(3);
    assertThat(checks).as("five handoffs at a bound of 1: a read of the queue each").isEqualTo(5);
  }

  @Test
  void whileThePlaceAwaitsItsRead_aWaiterGivesUp_anotherJoins_andTheAnswerServesIt()
      throws Exception {
    StalledPlace place = StalledPlace.start();

    place.first().close(); // the handoff reaches the bound of 1: its read's answer waits
    place.second().get(10, TimeUnit.SECONDS).close(); // the place waits for it, held by nobody
    assertThat(place.third().cancel(true)).as("gave up while the place waited").isTrue();
    CompletableFuture<LockHold> fourth = place.lock().acquireAsync().toCompletableFuture();
    long before = zk.requestsSoFar(place.local());
    place.resume().countDown();

    LockHold fourthHold = fourth.get(10, TimeUnit.SECONDS);
    assertThat(place.children())
        .as("found alone: passed on, still the same place")
        .containsExactly(place.firstPlace());
    assertThat(zk.requestsSoFar(place.local()) - before)
        .as("only the read at the fourth's grant: the third, withdrawn, was never granted")
        .isEqualTo(1);
    fourthHold.close();
    assertThat(place.lock().getParticipantNodes()).isEmpty();
  }

  @Test
  void whileThePlaceAwaitsItsRead_theLastWaiterGivesUp_andTheAnswerGivesThePlaceBack()
      throws Exception {
    StalledPlace place = StalledPlace.start();

    place.first().close();
    place.second().get(10, TimeUnit.SECONDS).close(); // the place waits for its read's answer
    assertThat(place.third().cancel(true)).isTrue(); // nobody waits any more
    place.resume().countDown();

    await().until(() -> place.children().isEmpty());
    assertThat(place.lock().getParticipantNodes()).isEmpty();
  }

  @Test
  void membersJoiningWhileThePlaceIsBeingTaken_waitForItInArrivalOrder() throws Exception {
    CuratorFramework local = zk.newClient();
    CuratorFramework observer = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = ReentrantMutex.builder(local, path).localHandoff().build();
    CountDownLatch resume = new CountDownLatch(1);
    stallEventThread(local, resume); // no answer reaches the place's attempt before the stall ends

    CompletableFuture<LockHold> first = lock.acquireAsync().toCompletableFuture();
    CompletableFuture<LockHold> second = lock.acquireAsync().toCompletableFuture();
    resume.countDown();

    LockHold firstHold = first.get(10, TimeUnit.SECONDS);
    assertThat(observer.getChildren().forPath(path)).as("one place for both").hasSize(1);
    assertThat(second).isNotDone();
    firstHold.close();
    second.get(10, TimeUnit.SECONDS).close();
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  @Test
  void aReadAtTheBoundThatFails_givesThePlaceBack_andTheWaiterTakesANewOne() throws Exception {
    StalledPlace place = StalledPlace.start();
    int allButRead = ZooDefs.Perms.ALL & ~ZooDefs.Perms.READ;
    place
        .observer()
        .setACL()
        .withACL(List.of(new ACL(allButRead, ZooDefs.Ids.ANYONE_ID_UNSAFE)))
        .forPath(place.path());

    place.first().close(); // the handoff reaches the bound: its read is refused
    LockHold secondHold = place.second().get(10, TimeUnit.SECONDS);
    place.local().checkExists().forPath("/"); // answered in order: the refusal has arrived too
    place.observer().setACL().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(place.path());
    secondHold.close(); // the place waits for the answer
    place.resume().countDown();

    place.thirdHoldsANewPlace();
  }

  @Test
  void aReadAtTheBoundThatFindsOurNodeGone_givesThePlaceBack() throws Exception {
    StalledPlace place = StalledPlace.start();
    place.observer().delete().forPath(place.path() + "/" + place.firstPlace()); // by someone else

    place.first().close(); // the handoff reaches the bound: its read finds no node of ours
    place.second().get(10, TimeUnit.SECONDS).close(); // the place waits for the answer
    place.resume().countDown();

    place.thirdHoldsANewPlace();
  }

  @Test
  void aQueueChangeHeardBeforeTheAnswer_givesThePlaceBack_thoughTheReadFoundItAlone()
      throws Exception {
    StalledPlace place = StalledPlace.start();
    String visitor = place.path() + "/visitor";
    place.observer().create().forPath(visitor); // fires the place's child watch: heard later
    place.observer().delete().forPath(visitor);

    place.first().close(); // the handoff reaches the bound: its read finds only our node
    place.second().get(10, TimeUnit.SECONDS).close(); // the place waits for the answer
    place.resume().countDown(); // the change is heard first, then the answer

    place.thirdHoldsANewPlace();
  }

  @Test
  void whileThePlaceAwaitsItsRead_theClientCloses_andTheWaiterFails() throws Exception {
    StalledPlace place = StalledPlace.start();

    place.first().close();
    place.second().get(10, TimeUnit.SECONDS).close(); // the place waits for its read's answer
    place.local().close(); // the place is lost, with nobody holding it
    place.resume().countDown();

    assertThatThrownBy(() -> place.third().get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(LockException.class)
        .hasMessageContaining("closed");
    assertThat(place.children()).as("the session's node went with it").isEmpty();
  }

  @Test
  void aPlaceThatCannotBeTaken_failsEveryLocalWaiter_andLeavesNothing() throws Exception {
    CuratorFramework local = zk.newClient();
    String path = zk.path("lock");
    int allButCreate = ZooDefs.Perms.ALL & ~ZooDefs.Perms.CREATE;
    zk.newClient()
        .create()
        .creatingParentsIfNeeded()
        .withACL(List.of(new ACL(allButCreate, ZooDefs.Ids.ANYONE_ID_UNSAFE)))
        .forPath(path);
    ReentrantMutex lock = ReentrantMutex.builder(local, path).localHandoff().build();

    CompletableFuture<LockHold> first = lock.acquireAsync().toCompletableFuture();
    CompletableFuture<LockHold> second = lock.acquireAsync().toCompletableFuture();

    for (CompletableFuture<LockHold> waiter : List.of(first, second)) {
      assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(LockException.class);
    }
    assertThat(lock.getParticipantNodes()).isEmpty();
    assertThatThrownBy(lock::hold).as("and a later attempt too").isInstanceOf(LockException.class);
  }

  /**
   * A lock with a bound of 1 whose first hold has two local waiters behind it, and the client's
   * event thread stalled until {@code resume} opens.
   */
  private record StalledPlace(
      CuratorFramework local,
      CuratorFramework observer,
      String path,
      ReentrantMutex lock,
      LockHold first,
      String firstPlace,
      CompletableFuture<LockHold> second,
      CompletableFuture<LockHold> third,
      CountDownLatch resume) {

    static StalledPlace start() throws Exception {
      CuratorFramework local = zk.newClient();
      CuratorFramework observer = zk.newClient();
      String path = zk.path("lock");
      ReentrantMutex lock = ReentrantMutex.builder(local, path).localHandoff(1).build();
      LockHold first = lock.hold();
      String firstPlace = observer.getChildren().forPath(path).get(0);
      CompletableFuture<LockHold> second = lock.acquireAsync().toCompletableFuture();
      CompletableFuture<LockHold> third = lock.acquireAsync().toCompletableFuture();
      CountDownLatch resume = new CountDownLatch(1);
      stallEventThread(local, resume);
      return new StalledPlace(
          local, observer, path, lock, first, firstPlace, second, third, resume);
    }

    /** The third waiter holds on a new place, the first having gone back; then it lets go. */
    void thirdHoldsANewPlace() throws Exception {
      LockHold thirdHold = third.get(10, TimeUnit.SECONDS);
      assertThat(children())
          .as("the place went back and a new one was taken")
          .hasSize(1)
          .doesNotContain(firstPlace);
      thirdHold.close();
      assertThat(lock.getParticipantNodes()).isEmpty();
    }

    /** The lock's nodes; none once the server has removed its emptied container. */
    List<String> children() throws Exception {
      try {
        return observer.getChildren().forPath(path);
      } catch (KeeperException.NoNodeException containerRemoved) {
        return List.of();
      }
    }
  }

  @Test
  void aLaterLocalHold_getsAGreaterToken_andAnEarlierHoldersChecksFail() throws Exception {
    CuratorFramework client = zk.newClient();
    client.create().creatingParentsIfNeeded().forPath(zk.path("data"), new byte[0]);
    ReentrantMutex lock = ReentrantMutex.builder(client, zk.path("lock")).localHandoff().build();

    LockHold first = lock.hold();
    long firstToken = first.fencingToken();
    List<CuratorOp> staleChecks = first.ownershipChecks();
    CompletableFuture<LockHold> waiting = lock.acquireAsync().toCompletableFuture();
    first.close();
    LockHold second = waiting.get(10, TimeUnit.SECONDS);

    long secondToken = second.fencingToken();
    assertThat(secondToken).isGreaterThan(firstToken);
    assertThatThrownBy(() -> write(client, staleChecks, "stale"))
        .isInstanceOf(KeeperException.BadVersionException.class);
    write(client, second.ownershipChecks(), "fresh");
    assertThat(new String(client.getData().forPath(zk.path("data")), "UTF-8")).isEqualTo("fresh");
    assertThat(second.fencingToken()).as("asked again: the same token").isEqualTo(secondToken);
    second.close();
  }

  private void write(CuratorFramework client, List<CuratorOp> checks, String value)
      throws Exception {
    List<CuratorOp> ops = new ArrayList<>(checks);
    ops.add(client.transactionOp().setData().forPath(zk.path("data"), value.getBytes("UTF-8")));
    client.transaction().forOperations(ops);
  }

  @Test
  void sessionLoss_losesTheHold_andLocalWaitersTakeANewPlace() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = ReentrantMutex.builder(client, zk.path("lock")).localHandoff().build();
    LockHold first = lock.hold();
    CompletableFuture<LockHold> waiting = lock.acquireAsync().toCompletableFuture();

    Sessions.expire(client, zk.server().getConnectString());

    await().until(() -> first.state() == LockState.LOST);
    assertThatThrownBy(first::checkHeld).isInstanceOf(LockOwnershipLostException.class);
    LockHold second = waiting.get(30, TimeUnit.SECONDS);
    assertThat(second.state()).isEqualTo(LockState.HELD);
    assertThat(second.fencingToken()).isGreaterThan(0);
    first.close(); // clears the lost hold, does not throw
    second.close();
    zk.assertNothingLeft();
  }

  @Test
  void aLocalWaiterThatGivesUp_leavesNothing() throws Exception {
    InterProcessMutex curator = new InterProcessMutex(zk.newClient(), zk.path("lock"));
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = ReentrantMutex.builder(client, zk.path("lock")).localHandoff().build();
    curator.acquire();
    try {
      assertThat(lock.tryHold(Duration.ofMillis(300))).as("Curator's holder excludes it").isEmpty();
      assertThat(lock.acquire(300, TimeUnit.MILLISECONDS)).isFalse();
      assertThat(lock.getParticipantNodes()).as("only Curator's node").hasSize(1);
      assertThat(lock.isAcquiredInThisProcess()).isFalse();
    } finally {
      curator.release();
    }
    try (LockHold hold = lock.hold()) {
      assertThat(curator.acquire(200, TimeUnit.MILLISECONDS))
          .as("and it excludes Curator")
          .isFalse();
      hold.checkHeld();
    }
  }

  @Test
  void threadsOfOneProcess_neverHoldTogether() throws Exception {
    CuratorFramework client = zk.newClient();
    List<Integer> overlaps = new CopyOnWriteArrayList<>();
    java.util.concurrent.atomic.AtomicInteger inside =
        new java.util.concurrent.atomic.AtomicInteger();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      ReentrantMutex lock = ReentrantMutex.builder(client, zk.path("lock")).localHandoff(3).build();
      Thread thread =
          new Thread(
              () -> {
                try {
                  for (int i = 0; i < 25; i++) {
                    lock.acquire();
                    try {
                      if (inside.incrementAndGet() > 1) {
                        overlaps.add(i);
                      }
                      lock.fencingToken();
                      inside.decrementAndGet();
                    } finally {
                      lock.release();
                    }
                  }
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      threads.add(thread);
      thread.start();
    }
    for (Thread thread : threads) {
      thread.join(60_000);
      assertThat(thread.isAlive()).isFalse();
    }
    assertThat(overlaps).isEmpty();
  }

  @Test
  void badBoundsAndRevocation_areRefused() {
    CuratorFramework client = zk.newClient();
    assertThatThrownBy(() -> ReentrantMutex.builder(client, zk.path("lock")).localHandoff(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxInARow");
    assertThatThrownBy(() -> NonReentrantMutex.builder(client, zk.path("lock")).localHandoff(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxInARow");
    ReentrantMutex lock = ReentrantMutex.builder(client, zk.path("lock")).localHandoff().build();
    assertThatThrownBy(() -> lock.makeRevocable(l -> {}))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void nonReentrantMutexes_shareThePlaceToo() throws Exception {
    CuratorFramework client = zk.newClient();
    NonReentrantMutex a = NonReentrantMutex.builder(client, zk.path("lock")).localHandoff().build();
    NonReentrantMutex b = NonReentrantMutex.builder(client, zk.path("lock")).localHandoff().build();
    a.acquire();
    CompletableFuture<LockHold> waiting = b.acquireAsync().toCompletableFuture();
    assertThat(client.getChildren().forPath(zk.path("lock"))).hasSize(1);
    a.release();
    waiting.get(10, TimeUnit.SECONDS).close();
    assertThat(a.getParticipantNodes()).isEmpty();
  }

  /**
   * Waits for grants {@code from} to {@code to} (exclusive), in the order they come; closes each.
   */
  private static void closeInTurn(
      Map<String, CompletableFuture<LockHold>> holds, List<String> order, int from, int to)
      throws Exception {
    for (int i = from; i < to; i++) {
      int granted = i + 1;
      await().until(() -> order.size() >= granted);
      holds.get(order.get(i)).get(10, TimeUnit.SECONDS).close();
    }
  }

  private static CompletableFuture<LockHold> recorded(
      ReentrantMutex lock, String name, List<String> order) {
    return lock.acquireAsync()
        .thenApply(
            hold -> {
              order.add(name);
              return hold;
            })
        .toCompletableFuture();
  }

  /**
   * Occupies the client's event thread until {@code resume} opens: watch events and the answers to
   * asynchronous requests queue behind it.
   */
  private static void stallEventThread(CuratorFramework client, CountDownLatch resume)
      throws Exception {
    CountDownLatch stalled = new CountDownLatch(1);
    client
        .getZookeeperClient()
        .getZooKeeper()
        .sync(
            "/",
            (rc, p, ctx) -> {
              stalled.countDown();
              try {
                resume.await(60, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            null);
    assertThat(stalled.await(10, TimeUnit.SECONDS)).as("event thread stalled").isTrue();
  }

  /** Returns once the client's event thread has processed everything the server sent so far. */
  private static void eventThreadCaughtUp(CuratorFramework client) throws Exception {
    CompletableFuture<Void> caughtUp = new CompletableFuture<>();
    client.checkExists().inBackground((c, event) -> caughtUp.complete(null)).forPath("/");
    caughtUp.get(10, TimeUnit.SECONDS);
  }
}

package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Which watches an attempt leaves on the server. The first read of a lock that last found its queue
 * empty leaves a child watch (an uncontended holder then notices its node's deletion at no extra
 * request); a lock that last found a queue leaves none, since it would only fire at the next
 * enqueue, and its holder watches its own node once the hold has lasted its grace. A contended hold
 * shorter than that costs Curator's requests and no watch of its own. Either way a deleted node is
 * noticed.
 */
@Timeout(60)
class QueueWatchTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void aLockThatFoundItsQueueEmpty_leavesAChildWatch_andNoticesItsNodeDeleted() throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework admin = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    lock.getStateListenable().addListener(change -> states.add(change.state()));
    long before = watches();

    lock.acquire();
    assertThat(watches()).as("one watch").isEqualTo(before + 1);
    assertThat(zk.stats().watchedPaths(Sessions.id(client)))
        .as("no data watch: a child watch")
        .isEmpty();

    admin.delete().forPath(lock.getParticipantNodes().iterator().next());
    await().until(() -> states.contains(LockState.LOST));
    lock.release();
  }

  @Test
  void aLockThatFoundAQueue_waitsWithoutAChildWatch_andItsHolderWatchesItsNodeAfterItsGrace()
      throws Exception {
    TwoLocks t = TwoLocks.create();
    ReentrantMutex other = t.other();
    ReentrantMutex lock = t.lock();
    String session = "0x" + Long.toHexString(Sessions.id(t.client()));
    String otherSession = "0x" + Long.toHexString(Sessions.id(t.otherClient()));

    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Void> waited = t.queueBehindTheOther(thread);
      other.release();
      waited.get(10, TimeUnit.SECONDS);
      thread.run(lock::release).get(); // the lock has now seen a queue
      long before = watches();

      other.acquire(); // its first read watches the children: +1
      String holder = other.getParticipantNodes().iterator().next();
      waited = thread.run(lock::acquire);
      // our enqueue fires that child watch; the holder watches its node after its grace, as does
      // our waiter at once
      await()
          .until(
              () ->
                  zk.stats().watchesByPath().getOrDefault(holder, List.of()).size() == 2
                      && zk.stats()
                          .watchesByPath()
                          .get(holder)
                          .containsAll(List.of(session, otherSession)));
      assertThat(watches())
          .as("two data watches on the holder's node, no child watch")
          .isEqualTo(before + 2);

      other.release();
      waited.get(10, TimeUnit.SECONDS);
      String ours = lock.getParticipantNodes().iterator().next();
      await()
          .untilAsserted(
              () ->
                  assertThat(zk.stats().watchedPaths(Sessions.id(t.client())))
                      .containsExactly(ours));

      t.admin().delete().forPath(ours);
      await().until(() -> t.states().contains(LockState.LOST));
      thread.run(lock::release).get();
    }
  }

  @Test
  void aContendedHoldShorterThanItsGrace_costsNoMoreThanCurator_andWatchesNothing()
      throws Exception {
    long lockstep = contendedRequests(QueueWatchTest::lockstepMutex, false);
    long curator = contendedRequests(InterProcessMutex::new, false);
    assertThat(curator).as("Curator: create, read, watch, read, delete").isEqualTo(5);
    assertThat(lockstep).as("behind the head: create, read, watch, delete").isEqualTo(4);

    long deepLockstep = contendedRequests(QueueWatchTest::lockstepMutex, true);
    long deepCurator = contendedRequests(InterProcessMutex::new, true);
    assertThat(deepLockstep).as("deeper: create, read, watch, read, delete").isEqualTo(5);
    assertThat(deepLockstep).isEqualTo(deepCurator);
  }

  @Test
  void aNodeDeletedWithinTheGrace_isNoticedWhenTheGraceEnds() throws Exception {
    TwoLocks t = TwoLocks.create();
    ReentrantMutex lock = t.lock();
    lock.holds.settings().ownNodeWatchGrace(TimeUnit.SECONDS.toNanos(1));

    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Void> waited = t.queueBehindTheOther(thread);
      t.other().release();
      waited.get(10, TimeUnit.SECONDS); // granted on the head's deletion: nothing watches it yet
      assertThat(zk.stats().watchedPaths(Sessions.id(t.client()))).as("no watch yet").isEmpty();

      t.admin().delete().forPath(lock.getParticipantNodes().iterator().next());
      await().until(() -> t.states().contains(LockState.LOST));
      assertThat(zk.stats().watchedPaths(Sessions.id(t.client())))
          .as("the read that found the node gone left no watch")
          .isEmpty();
      thread.run(lock::release).get();
    }
  }

  @Test
  void aWaiterRightBehindTheHolder_whoseNodeIsDeleted_holdsAndIsLostWhenTheGraceEnds()
      throws Exception {
    TwoLocks t = TwoLocks.create();

    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Void> waited = t.queueBehindTheOther(thread);
      String ours = List.copyOf(t.other().getParticipantNodes()).get(1);
      t.admin().delete().forPath(ours);
      t.other().release();

      waited.get(10, TimeUnit.SECONDS); // the holder's deletion granted it, unread
      await().until(() -> t.states().contains(LockState.LOST));
      assertThat(t.states()).containsExactly(LockState.HELD, LockState.LOST);
      assertThat(zk.stats().watchedPaths(Sessions.id(t.client()))).isEmpty();
      thread.run(t.lock()::release).get();
      Stat directory = t.admin().checkExists().forPath(t.path()); // null once reaped
      assertThat(directory == null ? 0 : directory.getNumChildren()).as("nodes left").isZero();
    }
  }

  /**
   * Two clients' mutexes on one path, {@code other} and {@code lock} (whose states are recorded),
   * and a third client to delete nodes as an operator would.
   */
  private record TwoLocks(
      String path,
      CuratorFramework otherClient,
      CuratorFramework client,
      CuratorFramework admin,
      ReentrantMutex other,
      ReentrantMutex lock,
      List<LockState> states) {
    static TwoLocks create() {
      String path = zk.path("lock");
      CuratorFramework otherClient = zk.newClient();
      CuratorFramework client = zk.newClient();
      ReentrantMutex lock = new ReentrantMutex(client, path);
      List<LockState> states = new CopyOnWriteArrayList<>();
      lock.getStateListenable().addListener(change -> states.add(change.state()));
      return new TwoLocks(
          path,
          otherClient,
          client,
          zk.newClient(),
          new ReentrantMutex(otherClient, path),
          lock,
          states);
    }

    /** {@code other} holds, and {@code lock} waits right behind it on {@code thread}. */
    CompletableFuture<Void> queueBehindTheOther(LockThread thread) throws Exception {
      other.acquire();
      CompletableFuture<Void> waited = thread.run(lock::acquire);
      await().until(() -> other.getParticipantNodes().size() == 2);
      return waited;
    }
  }

  /**
   * The requests one client's contended cycle costs: another client holds, this one queues behind
   * it ({@code deep}: behind a third client's waiter instead), the lock is handed on to it, and it
   * releases at once. Its session watches nothing while it holds.
   */
  private static long contendedRequests(
      BiFunction<CuratorFramework, String, InterProcessLock> factory, boolean deep)
      throws Exception {
    String path = zk.path("contended-" + UUID.randomUUID());
    CuratorFramework holderClient = zk.newClient();
    CuratorFramework middleClient = zk.newClient();
    CuratorFramework client = zk.newClient();
    var holder = factory.apply(holderClient, path);
    var middle = factory.apply(middleClient, path);
    var lock = factory.apply(client, path);
    try (LockThread middleThread = new LockThread("middle");
        LockThread thread = new LockThread("waiter")) {
      holder.acquire();
      int queued = 1;
      CompletableFuture<Void> middleGranted = null;
      if (deep) {
        middleGranted = middleThread.run(middle::acquire);
        int expected = ++queued;
        await().until(() -> children(holderClient, path) == expected);
      }
      long before = zk.requestsSoFar(client);
      CompletableFuture<Void> granted = thread.run(lock::acquire);
      int expected = ++queued;
      await().until(() -> children(holderClient, path) == expected);
      holder.release();
      if (deep) {
        middleGranted.get(10, TimeUnit.SECONDS);
        middleThread.run(middle::release).get(10, TimeUnit.SECONDS);
      }
      granted.get(10, TimeUnit.SECONDS);
      assertThat(zk.stats().watchedPaths(Sessions.id(client)))
          .as("the new holder's session watches nothing")
          .isEmpty();
      thread.run(lock::release).get(10, TimeUnit.SECONDS);
      return zk.requestsSoFar(client) - before;
    }
  }

  private static int children(CuratorFramework client, String path) throws Exception {
    return client.getChildren().forPath(path).size();
  }

  /** Lockstep's mutex with a grace longer than any test, so that no hold watches its node. */
  private static InterProcessLock lockstepMutex(CuratorFramework client, String path) {
    ReentrantMutex mutex = new ReentrantMutex(client, path);
    mutex.holds.settings().ownNodeWatchGrace(TimeUnit.HOURS.toNanos(1));
    return mutex;
  }

  /** Every watch on the server: data and child watches, by path and session. */
  private static long watches() {
    return zk.stats().monitor("zk_watch_count");
  }
}

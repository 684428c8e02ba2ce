package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.Sessions;
import io.lockstep.testing.ZooKeeperExtension;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Which watches an attempt leaves on the server. The first read of a lock that last found its queue
 * empty leaves a child watch (an uncontended holder then notices its node's deletion at no extra
 * request); a lock that last found a queue leaves none, since it would only fire at the next
 * enqueue, and its holder watches its own node instead. Either way a deleted node is noticed.
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
  void aLockThatFoundAQueue_waitsWithoutAChildWatch_andItsHolderWatchesItsOwnNode()
      throws Exception {
    String path = zk.path("lock");
    CuratorFramework otherClient = zk.newClient();
    CuratorFramework client = zk.newClient();
    CuratorFramework admin = zk.newClient();
    ReentrantMutex other = new ReentrantMutex(otherClient, path);
    ReentrantMutex lock = new ReentrantMutex(client, path);
    List<LockState> states = new CopyOnWriteArrayList<>();
    lock.getStateListenable().addListener(change -> states.add(change.state()));
    String session = "0x" + Long.toHexString(Sessions.id(client));
    String otherSession = "0x" + Long.toHexString(Sessions.id(otherClient));

    try (LockThread thread = new LockThread("waiter")) {
      other.acquire();
      CompletableFuture<Void> waited = thread.run(lock::acquire);
      await().until(() -> other.getParticipantNodes().size() == 2);
      other.release();
      waited.get(10, TimeUnit.SECONDS);
      thread.run(lock::release).get(); // the lock has now seen a queue
      long before = watches();

      other.acquire(); // its first read watches the children: +1
      String holder = other.getParticipantNodes().iterator().next();
      waited = thread.run(lock::acquire);
      // our enqueue fires that child watch; the holder then watches its node, as does our waiter
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
              () -> assertThat(zk.stats().watchedPaths(Sessions.id(client))).containsExactly(ours));

      admin.delete().forPath(ours);
      await().until(() -> states.contains(LockState.LOST));
      thread.run(lock::release).get();
    }
  }

  /** Every watch on the server: data and child watches, by path and session. */
  private static long watches() {
    return zk.stats().monitor("zk_watch_count");
  }
}

package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.testing.ZooKeeperExtension;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A child of a lock directory that is no lock node (a lock directory nested under it, a key of
 * {@link KeyedLocks} rooted there, an operator's node) neither holds nor blocks the lock, and the
 * inspector shows only lock nodes (issue 21: such a child sorting before the queue was taken for
 * the holder, and the lock hung until the server reaped it).
 */
@Timeout(60)
class StrayChildrenTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Names that sort before a sequence number by Curator's order: each used to block the lock. */
  private static final List<String> STRAYS = List.of("0000", "%2Fx", "-nested", ".hidden", "keys");

  @Test
  void childrenThatAreNoLockNodes_neitherHoldNorBlock_anyRecipe() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    for (String stray : STRAYS) {
      client.create().creatingParentsIfNeeded().forPath(path + "/" + stray);
    }
    List<FencedLock> locks =
        List.of(
            new ReentrantMutex(client, path),
            new NonReentrantMutex(client, path),
            ReentrantMutex.builder(client, path).localHandoff().build(),
            new ReadWriteMutex(client, path).writeLock(),
            new ReadWriteMutex(client, path).readLock(),
            new MultiMutex(client, List.of(path, zk.path("other"))));

    for (FencedLock lock : locks) {
      assertThat(lock.acquire(5, TimeUnit.SECONDS)).as("%s", lock).isTrue();
      assertThat(lock.getParticipantNodes())
          .as("%s's participants", lock)
          .hasSize(lock instanceof MultiMutex ? 2 : 1)
          .noneMatch(node -> STRAYS.contains(ZKPaths.getNodeFromPath(node)));
      LockInspector.Snapshot snapshot = new LockInspector(client).inspect(path);
      assertThat(snapshot.holders()).as("%s's holders", lock).hasSize(1);
      assertThat(snapshot.waiters()).isEmpty();
      lock.release();
    }
    assertThat(client.getChildren().forPath(path)).containsExactlyInAnyOrderElementsOf(STRAYS);
    for (String stray : STRAYS) {
      client.delete().forPath(path + "/" + stray);
    }
  }

  @Test
  void keyedLocksRootedUnderAMutexPath_andTheMutex_holdTogether() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("orders");
    ReentrantMutex all = new ReentrantMutex(client, path);
    KeyedLocks keys = new KeyedLocks(client, path);

    // keys whose directories sort before the mutex's nodes by Curator's order
    try (LockHold dash = keys.mutex("-7").hold();
        LockHold zeros = keys.mutex("0000").hold()) {
      assertThat(all.acquire(5, TimeUnit.SECONDS))
          .as("the keys' directories do not block")
          .isTrue();
      assertThat(all.getParticipantNodes()).hasSize(1);
      all.release();
      dash.checkHeld();
      zeros.checkHeld();
    }
  }

  @Test
  void aDowngradingWriter_isShownAsAHolder_withItsTiedReader() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("catalog");
    ReadWriteMutex catalog = new ReadWriteMutex(client, path);
    catalog.writeLock().acquire();
    catalog.readLock().acquire(); // the downgrade: a read node tied to the write node
    try {
      LockInspector.Snapshot snapshot = new LockInspector(client).inspect(path);

      assertThat(snapshot.holders())
          .extracting(LockInspector.Entry::mode)
          .containsExactlyInAnyOrder(LockInspector.Mode.READ, LockInspector.Mode.WRITE);
      assertThat(snapshot.waiters()).isEmpty();
    } finally {
      catalog.writeLock().release();
      catalog.readLock().release();
    }
  }
}

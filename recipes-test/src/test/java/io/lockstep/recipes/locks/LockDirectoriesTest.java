package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lock directories on a real server: a missing directory is made together with the first node in
 * it, in one multi, so that no directory is ever left that never had a child (the server keeps such
 * a container forever by default), whatever happens to the attempt meanwhile. The engine's side is
 * AcquisitionStateTest's CREATE_NONODE column.
 */
@Timeout(60)
class LockDirectoriesTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void aNewLocksDirectory_isMadeWithItsFirstNode_inOneMulti() throws Exception {
    CuratorFramework client = zk.newClient();
    client.create().creatingParentsIfNeeded().forPath(zk.path("locks"));
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("locks/new"));
    long before = zk.requestsSoFar(client);

    lock.acquire();
    lock.release();

    assertThat(zk.requestsSoFar(client) - before)
        .as("create and read (both refused), the multi and the read behind it, the delete")
        .isEqualTo(5);
  }

  @Test
  void missingParents_goIntoTheSameMulti_oneLevelMorePerSend() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("a/b/c/lock");
    int missing = 0;
    for (String directory = path;
        client.checkExists().forPath(directory) == null;
        directory = ZKPaths.getPathAndNode(directory).getPath()) {
      missing++; // lock, c, b, a, and the test's own root if not made yet
    }
    ReentrantMutex lock = new ReentrantMutex(client, path);
    long before = zk.requestsSoFar(client);

    lock.acquire();
    assertThat(zk.newClient().getChildren().forPath(path)).as("our node").hasSize(1);
    lock.release();

    // create and read; a multi per missing level, the first with a read behind it; a read after
    // the last; the delete
    assertThat(missing).isGreaterThanOrEqualTo(4);
    assertThat(zk.requestsSoFar(client) - before).isEqualTo(2 + missing + 1 + 1 + 1);
  }

  @Test
  void aMultiMutexOnNewPaths_makesEveryDirectoryWithItsNode() throws Exception {
    CuratorFramework client = zk.newClient();
    MultiMutex lock =
        MultiMutex.builder(client).mutex(zk.path("orders/1")).mutex(zk.path("orders/2/x")).build();

    CuratorFramework observer = zk.newClient();
    lock.acquire();
    try {
      for (String path : List.of(zk.path("orders/1"), zk.path("orders/2/x"))) {
        assertThat(observer.getChildren().forPath(path)).as("our node in %s", path).hasSize(1);
      }
    } finally {
      lock.release();
    }
  }

  @Test
  void everyDirectoryLeft_hadAChild_whenAcquiresOnNewKeysAreCancelledWhileTheyCreate()
      throws Exception {
    CuratorFramework client = zk.newClient();
    String root = zk.path("keys");
    KeyedLocks locks = new KeyedLocks(client, root, KeyLayout.hashed(2));
    int withdrawn = 0;
    for (int i = 0; i < 300; i++) {
      CompletableFuture<LockHold> acquiring =
          locks.mutex("key-" + i).acquireAsync().toCompletableFuture();
      LockSupport.parkNanos((i % 20) * 100_000L); // 0 to 2 ms: each phase of the creates
      if (acquiring.cancel(true)) { // withdrawn while its create, or its directories', may be out
        withdrawn++;
      } else { // granted before the cancel: the hold is ours to close, as for any caller
        acquiring.join().close();
      }
    }
    List<String> directories = new ArrayList<>();
    await("every attempt cleaned up")
        .until(
            () -> {
              directories.clear();
              return walk(client, root, directories);
            });

    for (String directory : directories) {
      Stat stat = client.checkExists().forPath(directory);
      if (stat != null) { // reaped meanwhile otherwise
        assertThat(stat.getCversion()).as("%s had a child", directory).isPositive();
      }
    }
    assertThat(withdrawn).as("acquires withdrawn while they created").isPositive();
  }

  /** Collects the directories under {@code root}; false while a lock node is still there. */
  private static boolean walk(CuratorFramework client, String root, List<String> directories)
      throws Exception {
    if (client.checkExists().forPath(root) == null) {
      return true;
    }
    List<String> children;
    try {
      children = client.getChildren().forPath(root);
    } catch (org.apache.zookeeper.KeeperException.NoNodeException reaped) {
      return true;
    }
    directories.add(root);
    for (String child : children) {
      if (child.startsWith("_c_")) {
        return false; // a lock node: its attempt is still cleaning up
      }
      if (!walk(client, ZKPaths.makePath(root, child), directories)) {
        return false;
      }
    }
    return true;
  }
}

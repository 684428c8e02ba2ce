package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Keyed locks in the hashed layout on a real server, whose container reaper runs every 500 ms
 * ({@code znode.container.checkIntervalMs}, set by {@link ZooKeeperExtension} before its server
 * starts; {@code maxPerMinute} and {@code maxNeverUsedIntervalMs} at ZooKeeper's defaults, 10,000
 * and 0): locks exclude each other across clients, every directory is a container that the server
 * reaps once unlocked (a server hides a node's container type from its stat, so reaping is how a
 * test sees it), and a directory deleted under acquiring clients is made again.
 */
@Timeout(120)
class KeyedLocksLayoutTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void hashedLocks_excludeEachOtherAcrossClients_inContainerDirectories() throws Exception {
    String root = zk.path("orders");
    CuratorFramework client = zk.newClient();
    KeyedLocks ours = new KeyedLocks(client, root, KeyLayout.hashed(2));
    KeyedLocks theirs = new KeyedLocks(zk.newClient(), root, KeyLayout.hashed(2));

    ReentrantMutex held = ours.mutex("order-17");
    held.acquire();
    try {
      assertThat(theirs.mutex("order-17").acquire(200, TimeUnit.MILLISECONDS)).isFalse();
      assertThat(theirs.mutex("order-18").acquire(5, TimeUnit.SECONDS)).isTrue();
      theirs.mutex("order-18").release();

      assertThat(ours.pathOf("order-17")).isEqualTo(root + "/72/a9/order-17");
      assertThat(client.getChildren().forPath(ours.pathOf("order-17"))).hasSize(1);
      assertThat(client.getChildren().forPath(root)).contains("72");
      assertThat(client.getChildren().forPath(root + "/72")).containsExactly("a9");
      assertThat(client.getChildren().forPath(root + "/72/a9")).containsExactly("order-17");
      assertThat(ours.keyOf(ours.pathOf("order-17"))).isEqualTo("order-17");
    } finally {
      held.release();
    }
  }

  @Test
  void everyDirectory_isReapedByTheServer_onceItsKeysAreUnlocked() throws Exception {
    String root = zk.path("accounts");
    CuratorFramework client = zk.newClient();
    KeyedLocks locks = new KeyedLocks(client, root, KeyLayout.hashed(2));
    for (int i = 0; i < 40; i++) {
      ReentrantMutex lock = locks.mutex("account-" + i);
      lock.acquire();
      lock.release();
    }
    assertThat(client.getChildren().forPath(root)).isNotEmpty();

    await("the reaper deletes the key directories, then the hashed ones, then the root")
        .atMost(Duration.ofSeconds(30))
        .until(() -> client.checkExists().forPath(root) == null);
  }

  @Test
  void directoriesDeletedUnderAcquiringClients_areMadeAgain_andTheLocksStillExclude()
      throws Exception {
    String root = zk.path("tenants");
    List<String> keys = sharingTheFirstDirectory(root, 4);
    AtomicBoolean deleting = new AtomicBoolean(true);
    AtomicInteger deleted = new AtomicInteger();
    CuratorFramework operator = zk.newClient();
    List<AtomicInteger> holders = new ArrayList<>();
    keys.forEach(key -> holders.add(new AtomicInteger()));
    AtomicInteger overlaps = new AtomicInteger();
    ExecutorService threads = Executors.newFixedThreadPool(3);
    try {
      Future<?> deleter =
          threads.submit(
              () -> {
                while (deleting.get()) {
                  deleted.addAndGet(deleteEmptyDirectories(operator, root));
                  Thread.sleep(5); // a sweep every few ms: a reaper far busier than a server's
                }
                return null;
              });
      List<Future<?>> lockers = new ArrayList<>();
      for (int c = 0; c < 2; c++) {
        KeyedLocks locks = new KeyedLocks(zk.newClient(), root, KeyLayout.hashed(2));
        lockers.add(
            threads.submit(
                () -> {
                  for (int cycle = 0; cycle < 150; cycle++) {
                    int k = cycle % keys.size();
                    ReentrantMutex lock = locks.mutex(keys.get(k));
                    lock.acquire();
                    try {
                      if (holders.get(k).incrementAndGet() > 1) {
                        overlaps.incrementAndGet();
                      }
                      holders.get(k).decrementAndGet();
                    } finally {
                      lock.release();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> locker : lockers) {
        locker.get(90, TimeUnit.SECONDS); // an acquire that failed would throw here
      }
      deleting.set(false);
      deleter.get(10, TimeUnit.SECONDS);
    } finally {
      deleting.set(false);
      threads.shutdownNow();
    }
    assertThat(overlaps).as("two holders of one key at once").hasValue(0);
    assertThat(deleted.get()).as("directories deleted under the lockers").isPositive();
  }

  /** {@code count} keys whose paths share the first hashed directory and differ in the second. */
  private static List<String> sharingTheFirstDirectory(String root, int count) {
    KeyLayout layout = KeyLayout.hashed(2);
    List<String> keys = new ArrayList<>();
    List<String> seconds = new ArrayList<>();
    String first = null;
    for (int i = 0; keys.size() < count; i++) {
      String key = "tenant-" + i;
      String[] parts = layout.pathOf(root, key).split("/");
      String firstDir = parts[parts.length - 3];
      String secondDir = parts[parts.length - 2];
      first = first == null ? firstDir : first;
      if (firstDir.equals(first) && !seconds.contains(secondDir)) {
        keys.add(key);
        seconds.add(secondDir);
      }
    }
    return keys;
  }

  /**
   * Deletes every empty directory under {@code root}, deepest first, as a reaper would (a real one
   * only those that once had a child; this one also a directory just made, before its child).
   */
  private static int deleteEmptyDirectories(CuratorFramework client, String root) throws Exception {
    int deleted = 0;
    List<String> children;
    try {
      children = client.getChildren().forPath(root);
    } catch (KeeperException.NoNodeException gone) {
      return 0;
    }
    for (String child : children) {
      if (!child.startsWith("_c_")) {
        deleted += deleteEmptyDirectories(client, ZKPaths.makePath(root, child));
      }
    }
    try {
      client.delete().forPath(root);
      return deleted + 1;
    } catch (KeeperException.NotEmptyException | KeeperException.NoNodeException busy) {
      return deleted;
    }
  }
}

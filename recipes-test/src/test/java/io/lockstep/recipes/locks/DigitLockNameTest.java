package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.testing.ZooKeeperExtension;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A lock name that can occur inside ZooKeeper's 10-digit sequence suffix. Curator's sort rule (the
 * text after the <em>last</em> occurrence of the lock name) then cuts some names inside the suffix
 * and orders the queue wrongly. A lock must either refuse such a name when it is built, or order
 * its queue correctly; it must never grant two holders at once.
 */
@Timeout(60)
class DigitLockNameTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Curator's mutex order, under a lock name of digits only. */
  private static final class DigitsMutexDriver implements LockDriver {
    private final String lockName;

    DigitsMutexDriver(String lockName) {
      this.lockName = lockName;
    }

    @Override
    public String lockName() {
      return lockName;
    }

    @Override
    public LockDecision decide(List<String> sortedNodeNames, String ourNodeName) {
      int ours = sortedNodeNames.indexOf(ourNodeName);
      return ours == 0 ? LockDecision.hold() : LockDecision.watch(sortedNodeNames.get(ours - 1));
    }
  }

  // Breach 6: with lock name "7", a newcomer whose suffix ends in 7 sorted ahead of the holder
  // and was granted while the holder held.
  @Test
  void lockNameOfDigits_isRefusedOrNeverGrantsANewcomerWhileHeld() throws Exception {
    LockDriver driver = new DigitsMutexDriver("7");
    CuratorFramework admin = zk.newClient();
    ReentrantMutex holder;
    ReentrantMutex newcomer;
    try {
      holder = new ReentrantMutex(zk.newClient(), zk.path("lock"), driver);
      newcomer = new ReentrantMutex(zk.newClient(), zk.path("lock"), driver);
    } catch (IllegalArgumentException refused) {
      return; // one of the two accepted fixes: such a lock name is refused up front
    }
    // Under Curator's rule the holder's ...-70000000079 sorts by "9" (cut after the 7 of its
    // suffix), the newcomer's ...-70000000080 by "0000000080": the newcomer sorts first.
    bumpSequenceTo(admin, zk.path("lock"), 79);

    holder.acquire();
    List<String> held = admin.getChildren().forPath(zk.path("lock"));
    assertThat(held).singleElement().asString().endsWith("70000000079");

    boolean granted = newcomer.acquire(1, TimeUnit.SECONDS);
    List<String> queue = admin.getChildren().forPath(zk.path("lock"));
    if (granted) {
      newcomer.release();
    }

    assertThat(granted).as("newcomer granted while the holder holds; queue %s", queue).isFalse();
    holder.checkHeld();
    holder.release();
  }

  /**
   * Creates and deletes sequential children of {@code path} until the next sequential child it gets
   * carries the sequence number {@code next}.
   */
  private static void bumpSequenceTo(CuratorFramework admin, String path, int next)
      throws Exception {
    admin.create().creatingParentsIfNeeded().forPath(path);
    int last = -1;
    while (last < next - 1) {
      String bump = admin.create().withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath(path + "/x");
      admin.delete().forPath(bump);
      last = Integer.parseInt(bump.substring(bump.length() - 10));
    }
    assertThat(last).isEqualTo(next - 1);
  }
}

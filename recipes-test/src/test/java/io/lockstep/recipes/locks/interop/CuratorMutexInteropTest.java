package io.lockstep.recipes.locks.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.Hammer;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A rolling upgrade: Curator's {@code InterProcessMutex} and Lockstep's mutexes on one path, from
 * separate clients, exclude each other.
 */
@Timeout(90)
class CuratorMutexInteropTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void curatorAndLockstep_excludeEachOther_inBothDirections() throws Exception {
    InterProcessMutex curator = new InterProcessMutex(zk.newClient(), zk.path("lock"));
    ReentrantMutex ours = new ReentrantMutex(zk.newClient(), zk.path("lock"));

    curator.acquire();
    assertThat(ours.acquire(300, TimeUnit.MILLISECONDS)).isFalse();
    curator.release();

    assertThat(ours.acquire(5, TimeUnit.SECONDS)).isTrue();
    try (LockThread other = new LockThread("curator")) {
      assertThat(other.call(() -> curator.acquire(300, TimeUnit.MILLISECONDS)).get()).isFalse();
      CompletableFuture<Boolean> waiting = other.call(() -> curator.acquire(10, TimeUnit.SECONDS));
      ours.release();
      assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
      other.run(curator::release).get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void ourNodes_haveCuratorsNameLayout() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex ours = new ReentrantMutex(client, zk.path("lock"));
    ours.acquire();

    assertThat(client.getChildren().forPath(zk.path("lock")))
        .singleElement()
        .asString()
        .matches("_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-\\d{10}");
    ours.release();
  }

  @Test
  void mixedFleet_hammeringOnePath_neverHasTwoHolders() throws Exception {
    List<InterProcessLock> locks = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      locks.add(new InterProcessMutex(zk.newClient(), zk.path("lock")));
      locks.add(new ReentrantMutex(zk.newClient(), zk.path("lock")));
      locks.add(new NonReentrantMutex(zk.newClient(), zk.path("lock")));
    }
    Hammer.Result result = Hammer.run(locks, 20, 80);

    assertThat(result.entries()).isEqualTo(locks.size() * 20);
    assertThat(result.mostInsideAtOnce()).isEqualTo(1);
  }

  /**
   * Documented difference: Curator's semaphore mutex keeps its nodes under {@code path/locks} and
   * {@code path/leases}, so it does not see our queue. Migrate all users of a path together.
   */
  @Test
  void nonReentrantMutex_doesNotExcludeCuratorsSemaphoreMutex() throws Exception {
    InterProcessSemaphoreMutex curator =
        new InterProcessSemaphoreMutex(zk.newClient(), zk.path("lock"));
    NonReentrantMutex ours = new NonReentrantMutex(zk.newClient(), zk.path("lock"));

    curator.acquire();
    boolean bothHeld = ours.acquire(5, TimeUnit.SECONDS);

    assertThat(bothHeld).isTrue();
    ours.release();
    curator.release();
  }
}

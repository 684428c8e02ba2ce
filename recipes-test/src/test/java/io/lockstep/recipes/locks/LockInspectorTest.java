package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.Sessions;
import io.lockstep.testing.ZooKeeperExtension;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Holders and waiters, read from the server, for Lockstep's and Curator's nodes. */
@Timeout(60)
class LockInspectorTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void mutexQueue_showsTheHolderThenTheWaitersInOrder_acrossImplementations() throws Exception {
    CuratorFramework holderClient =
        zk.newClient(b -> b.defaultData("holder".getBytes(StandardCharsets.UTF_8)));
    ReentrantMutex holder = new ReentrantMutex(holderClient, zk.path("lock"));
    InterProcessMutex curatorWaiter = new InterProcessMutex(zk.newClient(), zk.path("lock"));
    holder.acquire();
    LockInspector inspector = new LockInspector(zk.newClient());
    try (LockThread thread = new LockThread("curator")) {
      CompletableFuture<Boolean> waiting =
          thread.call(() -> curatorWaiter.acquire(20, TimeUnit.SECONDS));
      await().until(() -> inspector.inspect(zk.path("lock")).waiters().size() == 1);

      LockInspector.Snapshot snapshot = inspector.inspect(zk.path("lock"));

      assertThat(snapshot.holders())
          .singleElement()
          .satisfies(
              entry -> {
                assertThat(entry.mode()).isEqualTo(LockInspector.Mode.MUTEX);
                assertThat(entry.sessionId()).isEqualTo(Sessions.id(holderClient));
                assertThat(new String(entry.data(), StandardCharsets.UTF_8)).isEqualTo("holder");
                assertThat(entry.age().isNegative()).isFalse();
              });
      assertThat(snapshot.waiters())
          .singleElement()
          .extracting(LockInspector.Entry::mode)
          .isEqualTo(LockInspector.Mode.MUTEX);
      holder.release();
      assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
      thread.run(curatorWaiter::release).get();
    }
    assertThat(inspector.inspect(zk.path("lock")).holders()).isEmpty();
  }

  @Test
  void readWriteQueue_readersAheadOfTheFirstWriterHold() throws Exception {
    ReadWriteMutex ours = new ReadWriteMutex(zk.newClient(), zk.path("lock"));
    InterProcessReadWriteLock curator =
        new InterProcessReadWriteLock(zk.newClient(), zk.path("lock"));
    ReadWriteMutex writer = new ReadWriteMutex(zk.newClient(), zk.path("lock"));
    ours.readLock().acquire();
    curator.readLock().acquire();
    LockInspector inspector = new LockInspector(zk.newClient());
    try (LockThread thread = new LockThread("writer")) {
      CompletableFuture<Void> waiting = thread.run(writer.writeLock()::acquire);
      await().until(() -> inspector.inspect(zk.path("lock")).waiters().size() == 1);

      LockInspector.Snapshot snapshot = inspector.inspect(zk.path("lock"));

      assertThat(snapshot.holders())
          .extracting(LockInspector.Entry::mode)
          .containsExactly(LockInspector.Mode.READ, LockInspector.Mode.READ);
      assertThat(snapshot.waiters())
          .extracting(LockInspector.Entry::mode)
          .containsExactly(LockInspector.Mode.WRITE);
      ours.readLock().release();
      curator.readLock().release();
      waiting.get(10, TimeUnit.SECONDS);
      assertThat(inspector.inspect(zk.path("lock")).holders())
          .extracting(LockInspector.Entry::mode)
          .containsExactly(LockInspector.Mode.WRITE);
      thread.run(writer.writeLock()::release).get();
    }
  }

  @Test
  void curatorsSemaphoreMutex_showsItsLeaseAsTheHolder() throws Exception {
    InterProcessSemaphoreMutex curator =
        new InterProcessSemaphoreMutex(zk.newClient(), zk.path("lock"));
    curator.acquire();

    LockInspector.Snapshot snapshot = new LockInspector(zk.newClient()).inspect(zk.path("lock"));

    assertThat(snapshot.holders())
        .singleElement()
        .extracting(LockInspector.Entry::mode)
        .isEqualTo(LockInspector.Mode.LEASE);
    curator.release();
  }

  @Test
  void missingPath_isAnEmptyLock() {
    LockInspector.Snapshot snapshot = new LockInspector(zk.newClient()).inspect(zk.path("none"));

    assertThat(snapshot.holders()).isEmpty();
    assertThat(snapshot.waiters()).isEmpty();
  }
}

package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
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
  void latchElection_sortsBySequence_theLeaderHolds_acrossImplementations() throws Exception {
    String path = zk.path("election");
    LockInspector inspector = new LockInspector(zk.newClient());
    List<LeaderLatch> latches = new java.util.ArrayList<>();
    List<LeaderElection> elections = new java.util.ArrayList<>();
    // Five participants, alternating: a UUID order would match the joining order 1 time in 120.
    for (int i = 0; i < 5; i++) {
      String id = "p" + i;
      if (i % 2 == 0) {
        LeaderLatch latch = new LeaderLatch(zk.newClient(), path, id);
        latch.start();
        latches.add(latch);
      } else {
        LeaderElection election =
            LeaderElection.builder(zk.newClient(), path).participantId(id).build();
        election.start();
        elections.add(election);
      }
      int joined = i + 1;
      await().until(() -> inspector.inspect(path).waiters().size() == joined - 1);
    }
    assertThat(latches.get(0).await(10, TimeUnit.SECONDS)).isTrue();

    LockInspector.Snapshot snapshot = inspector.inspect(path);

    assertThat(snapshot.holders())
        .singleElement()
        .satisfies(
            leader -> {
              assertThat(leader.mode()).isEqualTo(LockInspector.Mode.LATCH);
              assertThat(new String(leader.data(), StandardCharsets.UTF_8)).isEqualTo("p0");
            });
    assertThat(snapshot.waiters())
        .extracting(entry -> new String(entry.data(), StandardCharsets.UTF_8))
        .containsExactly("p1", "p2", "p3", "p4");
    assertThat(snapshot.waiters())
        .extracting(LockInspector.Entry::mode)
        .containsOnly(LockInspector.Mode.LATCH);
    latches.get(0).close();
    assertThat(elections.get(0).awaitLeadership(Duration.ofSeconds(10))).isPresent();
    assertThat(inspector.inspect(path).holders())
        .singleElement()
        .extracting(entry -> new String(entry.data(), StandardCharsets.UTF_8))
        .isEqualTo("p1");
    elections.forEach(LeaderElection::close);
    for (LeaderLatch latch : latches.subList(1, latches.size())) {
      latch.close();
    }
  }

  @Test
  void semaphore_firstMaxLeasesHold_theWaitingLeaseAndTheLocksQueueWait() throws Exception {
    String path = zk.path("semaphore");
    LockInspector inspector = new LockInspector(zk.newClient());
    CuratorFramework lockstepClient = zk.newClient();
    CountingSemaphore lockstep = new CountingSemaphore(lockstepClient, path, 2);
    InterProcessSemaphoreV2 curator = new InterProcessSemaphoreV2(zk.newClient(), path, 2);
    InterProcessSemaphoreV2 curatorWaiter = new InterProcessSemaphoreV2(zk.newClient(), path, 2);
    CountingSemaphore lockstepWaiter = new CountingSemaphore(zk.newClient(), path, 2);
    LockHold held = lockstep.acquire();
    Lease curatorLease = curator.acquire();
    try (LockThread thread = new LockThread("curator")) {
      CompletableFuture<Lease> curatorWaiting =
          thread.call(() -> curatorWaiter.acquire(20, TimeUnit.SECONDS));
      await().until(() -> inspector.inspectSemaphore(path, 2).waiters().size() == 1);
      CompletionStage<LockHold> lockstepWaiting =
          lockstepWaiter.acquireAsync(Duration.ofSeconds(20));
      await().until(() -> inspector.inspectSemaphore(path, 2).waiters().size() == 2);

      LockInspector.Snapshot snapshot = inspector.inspectSemaphore(path, 2);

      assertThat(snapshot.holders())
          .extracting(LockInspector.Entry::mode)
          .containsExactly(LockInspector.Mode.LEASE, LockInspector.Mode.LEASE);
      assertThat(snapshot.holders().get(0).sessionId()).isEqualTo(Sessions.id(lockstepClient));
      assertThat(snapshot.waiters())
          .extracting(LockInspector.Entry::mode)
          .containsExactly(LockInspector.Mode.LEASE, LockInspector.Mode.MUTEX);
      assertThat(snapshot.waiters().get(1).node()).startsWith(path + "/locks/");
      assertThat(inspector.inspect(path).holders()).hasSize(3); // every lease, without maxLeases
      held.close();
      Lease curatorGot = curatorWaiting.get(10, TimeUnit.SECONDS);
      assertThat(curatorGot).isNotNull();
      curator.returnLease(curatorLease);
      LockHold lockstepGot = lockstepWaiting.toCompletableFuture().get(10, TimeUnit.SECONDS);
      lockstepGot.close();
      thread.run(() -> curatorWaiter.returnLease(curatorGot)).get();
    }
    await().until(() -> inspector.inspectSemaphore(path, 2).holders().isEmpty());
    assertThat(inspector.inspectSemaphore(path, 2).waiters()).isEmpty();
  }

  @Test
  void missingPath_isAnEmptyLock() {
    LockInspector.Snapshot snapshot = new LockInspector(zk.newClient()).inspect(zk.path("none"));

    assertThat(snapshot.holders()).isEmpty();
    assertThat(snapshot.waiters()).isEmpty();
    assertThat(new LockInspector(zk.newClient()).inspectSemaphore(zk.path("none"), 3).holders())
        .isEmpty();
  }
}

package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Readers share, writers exclude, downgrades keep the lock, upgrades are refused: the behaviours of
 * Curator's {@code TestInterProcessReadWriteLock}, which builds its locks itself and so cannot run
 * on ours.
 */
@Timeout(60)
class ReadWriteMutexTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private ReadWriteMutex newMutex() {
    return new ReadWriteMutex(zk.newClient(), zk.path("lock"));
  }

  @Test
  void readers_shareTheLock() throws Exception {
    ReadWriteMutex first = newMutex();
    ReadWriteMutex second = newMutex();

    first.readLock().acquire();
    assertThat(second.readLock().acquire(5, TimeUnit.SECONDS)).isTrue();

    assertThat(first.readLock().getParticipantNodes()).hasSize(2);
    second.readLock().release();
    first.readLock().release();
  }

  @Test
  void writer_excludesReadersAndWriters_andReadersExcludeTheWriter() throws Exception {
    ReadWriteMutex writer = newMutex();
    ReadWriteMutex other = newMutex();

    writer.writeLock().acquire();
    assertThat(other.readLock().acquire(200, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(other.writeLock().acquire(200, TimeUnit.MILLISECONDS)).isFalse();
    writer.writeLock().release();

    other.readLock().acquire();
    assertThat(writer.writeLock().acquire(200, TimeUnit.MILLISECONDS)).isFalse();
    other.readLock().release();
  }

  @Test
  void threadsOfOneMutex_shareTheReadLock_andItsWritersWaitForEveryEarlierReader()
      throws Exception {
    CuratorFramework client = zk.newClient();
    ReadWriteMutex mutex = new ReadWriteMutex(client, zk.path("lock"));
    List<LockThread> readers =
        List.of(new LockThread("r0"), new LockThread("r1"), new LockThread("r2"));
    List<LockThread> writers = List.of(new LockThread("w0"), new LockThread("w1"));
    try {
      for (LockThread reader : readers) { // one after another: the queue order is known
        reader.run(mutex.readLock()::acquire).get(10, TimeUnit.SECONDS);
      }
      List<CompletableFuture<Void>> writing = new ArrayList<>();
      for (LockThread writer : writers) {
        writing.add(writer.run(mutex.writeLock()::acquire));
        int queued = writing.size();
        await().until(() -> mutex.writeLock().getParticipantNodes().size() == queued);
      }
      List<String> readNodes = List.copyOf(mutex.readLock().getParticipantNodes());
      assertThat(readNodes).hasSize(readers.size());

      readers.get(2).run(mutex.readLock()::release).get(10, TimeUnit.SECONDS);
      long session = Sessions.id(client);
      await("the first writer watches the next reader ahead")
          .untilAsserted(
              () -> assertThat(zk.stats().watchedPaths(session)).contains(readNodes.get(1)));
      assertThat(writing.get(0)).isNotDone();
      readers.get(1).run(mutex.readLock()::release).get(10, TimeUnit.SECONDS);
      readers.get(0).run(mutex.readLock()::release).get(10, TimeUnit.SECONDS);
      writing.get(0).get(10, TimeUnit.SECONDS);
      assertThat(writing.get(1)).isNotDone();
      writers.get(0).run(mutex.writeLock()::release).get(10, TimeUnit.SECONDS);
      writing.get(1).get(10, TimeUnit.SECONDS);
      writers.get(1).run(mutex.writeLock()::release).get(10, TimeUnit.SECONDS);
    } finally {
      readers.forEach(LockThread::close);
      writers.forEach(LockThread::close);
    }
  }

  @Test
  void writeHold_letsOnlyItsOwnThreadTakeTheReadLock_evenOnTheSameObject() throws Exception {
    ReadWriteMutex mutex = newMutex();
    mutex.writeLock().acquire();
    try (LockThread other = new LockThread("other")) {
      assertThat(
              other
                  .call(() -> mutex.readLock().acquire(200, TimeUnit.MILLISECONDS))
                  .get(10, TimeUnit.SECONDS))
          .isFalse();
      CompletableFuture<Void> reading = other.run(mutex.readLock()::acquire);
      await().until(() -> mutex.readLock().getParticipantNodes().size() == 1);
      assertThat(reading).isNotDone();

      mutex.writeLock().release();
      reading.get(10, TimeUnit.SECONDS);
      assertThat(other.call(mutex.readLock()::isOwnedByCurrentThread).get()).isTrue();
      assertThat(mutex.readLock().isOwnedByCurrentThread()).isFalse();
      other.run(mutex.readLock()::release).get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void waitingReader_watchesTheNearestWriterAhead_notTheFirst() throws Exception {
    ReadWriteMutex reader = newMutex();
    ReadWriteMutex firstWriter = newMutex();
    ReadWriteMutex secondWriter = newMutex();
    CuratorFramework lateClient = zk.newClient();
    ReadWriteMutex lateReader = new ReadWriteMutex(lateClient, zk.path("lock"));
    reader.readLock().acquire();
    try (LockThread w1 = new LockThread("w1");
        LockThread w2 = new LockThread("w2");
        LockThread r = new LockThread("late-reader")) {
      CompletableFuture<Void> first = w1.run(firstWriter.writeLock()::acquire);
      await().until(() -> reader.writeLock().getParticipantNodes().size() == 1);
      CompletableFuture<Void> second = w2.run(secondWriter.writeLock()::acquire);
      await().until(() -> reader.writeLock().getParticipantNodes().size() == 2);
      CompletableFuture<Void> late = r.run(lateReader.readLock()::acquire);
      await().until(() -> reader.readLock().getParticipantNodes().size() == 2);
      String nearestWriter = List.copyOf(reader.writeLock().getParticipantNodes()).get(1);

      long session = Sessions.id(lateClient);
      await()
          .untilAsserted(
              () -> assertThat(zk.stats().watchedPaths(session)).contains(nearestWriter));

      reader.readLock().release();
      first.get(10, TimeUnit.SECONDS);
      w1.run(firstWriter.writeLock()::release).get();
      second.get(10, TimeUnit.SECONDS);
      assertThat(late).isNotDone();
      w2.run(secondWriter.writeLock()::release).get();
      late.get(10, TimeUnit.SECONDS);
      r.run(lateReader.readLock()::release).get();
    }
  }

  @Test
  void downgrade_tiesTheReadNodeToTheWriteNode_andKeepsWritersOut() throws Exception {
    CuratorFramework client = zk.newClient();
    ReadWriteMutex mutex = new ReadWriteMutex(client, zk.path("lock"));
    ReadWriteMutex writer = newMutex();
    mutex.writeLock().acquire();
    String writeNode = mutex.writeLock().getParticipantNodes().iterator().next();

    mutex.readLock().acquire();
    String readNode = mutex.readLock().getParticipantNodes().iterator().next();
    mutex.writeLock().release();

    assertThat(readNode.substring(readNode.length() - 10))
        .isEqualTo(writeNode.substring(writeNode.length() - 10));
    Stat tie = client.checkExists().forPath(readNode);
    assertThat(tie.getEphemeralOwner()).isEqualTo(Sessions.id(client));
    mutex.readLock().checkHeld();
    assertThat(writer.writeLock().acquire(200, TimeUnit.MILLISECONDS)).isFalse();
    try (LockThread w = new LockThread("writer")) {
      CompletableFuture<Boolean> waiting =
          w.call(() -> writer.writeLock().acquire(10, TimeUnit.SECONDS));
      mutex.readLock().release();
      assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
      w.run(writer.writeLock()::release).get();
    }
  }

  @Test
  void downgrade_whileAnotherWriterWaits_keepsThatWriterOut_untilTheReadIsReleased()
      throws Exception {
    ReadWriteMutex mutex = newMutex();
    CuratorFramework writerClient = zk.newClient();
    ReadWriteMutex writer = new ReadWriteMutex(writerClient, zk.path("lock"));
    mutex.writeLock().acquire();
    try (LockThread w = new LockThread("writer")) {
      CompletableFuture<Void> waiting = w.run(writer.writeLock()::acquire);
      await().until(() -> mutex.writeLock().getParticipantNodes().size() == 2);

      mutex.readLock().acquire();
      String tie = mutex.readLock().getParticipantNodes().iterator().next();
      mutex.writeLock().release();

      long session = Sessions.id(writerClient);
      await("the waiting writer watches the tied read node, which sorts before it")
          .untilAsserted(() -> assertThat(zk.stats().watchedPaths(session)).contains(tie));
      assertThat(waiting).isNotDone();
      mutex.readLock().release();
      waiting.get(10, TimeUnit.SECONDS);
      w.run(writer.writeLock()::release).get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void upgrade_isRefused_timedReturnsFalse_untimedThrows_andNothingIsCreated() throws Exception {
    ReadWriteMutex mutex = newMutex();
    mutex.readLock().acquire();

    assertThat(mutex.writeLock().acquire(10, TimeUnit.SECONDS)).isFalse();
    assertThatThrownBy(() -> mutex.writeLock().acquire())
        .isInstanceOf(IllegalMonitorStateException.class)
        .hasMessageContaining(zk.path("lock"));

    assertThat(mutex.writeLock().getParticipantNodes()).isEmpty();
    mutex.readLock().release();
  }

  @Test
  void readLock_isReentrantPerThread_andCostsThreeRequestsPerCycle() throws Exception {
    CuratorFramework client = zk.newClient();
    ReadWriteMutex mutex = new ReadWriteMutex(client, zk.path("lock"));
    client.create().creatingParentsIfNeeded().forPath(zk.path("lock"));
    long before = zk.requestsSoFar(client);

    mutex.readLock().acquire();
    mutex.readLock().acquire();
    assertThat(mutex.readLock().getHoldCount()).isEqualTo(2);
    mutex.readLock().release();
    mutex.readLock().release();

    assertThat(zk.requestsSoFar(client) - before).isEqualTo(3);
    assertThat(mutex.readLock().isOwnedByCurrentThread()).isFalse();
  }

  @Test
  void participantNodes_areFilteredByMode() throws Exception {
    ReadWriteMutex reader = newMutex();
    ReadWriteMutex writer = newMutex();
    reader.readLock().acquire();
    try (LockThread w = new LockThread("writer")) {
      CompletableFuture<Void> waiting = w.run(writer.writeLock()::acquire);
      await().until(() -> writer.writeLock().getParticipantNodes().size() == 1);

      assertThat(reader.readLock().getParticipantNodes())
          .singleElement()
          .asString()
          .contains("__READ__");
      assertThat(writer.writeLock().getParticipantNodes())
          .singleElement()
          .asString()
          .contains("__WRIT__");
      reader.readLock().release();
      waiting.get(10, TimeUnit.SECONDS);
      w.run(writer.writeLock()::release).get();
    }
  }

  @Test
  void lockData_isCopied_andStoredInEveryNode() throws Exception {
    CuratorFramework client = zk.newClient();
    byte[] lockData = {4, 2};
    ReadWriteMutex mutex = new ReadWriteMutex(client, zk.path("lock"), lockData);
    lockData[0] = 9; // the mutex keeps its own copy
    mutex.writeLock().acquire();
    mutex.readLock().acquire();

    for (String node : client.getChildren().forPath(zk.path("lock"))) {
      assertThat(client.getData().forPath(zk.path("lock") + "/" + node)).containsExactly(4, 2);
    }
    mutex.readLock().release();
    mutex.writeLock().release();
  }
}

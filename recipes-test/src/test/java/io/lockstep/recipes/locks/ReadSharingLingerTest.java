package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A read-write lock built with {@code linger}: the process's read node is kept with no reader while
 * nobody else queues, and goes back when a writer of this process or another participant queues, or
 * when the linger runs out.
 */
@Timeout(60)
class ReadSharingLingerTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private ReadWriteMutex lingering(CuratorFramework client, String path) {
    return ReadWriteMutex.builder(client, path).linger(Duration.ofMinutes(1)).build();
  }

  @Test
  void readsOneAfterAnother_keepOneNode_andSendNothingAfterTheFirst() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    client.create().creatingParentsIfNeeded().forPath(path); // persistent: no reaper's requests
    ReadWriteMutex lock = lingering(client, path);
    lock.readLock().acquire();
    lock.readLock().release();
    List<String> kept = client.getChildren().forPath(path);
    assertThat(kept).as("kept with no reader").hasSize(1);

    long before = zk.requestsSoFar(client);
    for (int i = 0; i < 10; i++) {
      lock.readLock().acquire();
      lock.readLock().release();
    }
    assertThat(zk.requestsSoFar(client) - before).as("ten reads of a kept node").isZero();
    assertThat(client.getChildren().forPath(path)).isEqualTo(kept);
    lock.close();
    await().until(() -> client.getChildren().forPath(path).isEmpty());
  }

  @Test
  void aKeptNode_goesBack_whenAWriterOfThisProcessWaits() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    ReadWriteMutex lock = lingering(client, path);
    lock.readLock().acquire();
    lock.readLock().release();
    assertThat(ReadSharingTest.nodes(client, path, "__READ__")).hasSize(1);

    assertThat(lock.writeLock().acquire(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ReadSharingTest.nodes(client, path, "__READ__")).as("given back").isEmpty();
    lock.writeLock().release();
  }

  @Test
  void aKeptNode_goesBack_whenCuratorsWriterQueues_andTheWriterExcludesOurReaders()
      throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    ReadWriteMutex lock = lingering(client, path);
    lock.readLock().acquire();
    lock.readLock().release();
    InterProcessReadWriteLock curator = new InterProcessReadWriteLock(zk.newClient(), path);

    assertThat(curator.writeLock().acquire(10, TimeUnit.SECONDS))
        .as("the kept node went back when Curator's writer queued")
        .isTrue();
    assertThat(ReadSharingTest.nodes(client, path, "__READ__")).isEmpty();
    CompletableFuture<Boolean> reading =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                boolean held = lock.readLock().acquire(10, TimeUnit.SECONDS);
                if (held) {
                  lock.readLock().release();
                }
                return held;
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
              }
            });
    await().until(() -> ReadSharingTest.nodes(client, path, "__READ__").size() == 1);
    assertThat(reading).as("waits behind the writer").isNotDone();
    curator.writeLock().release();
    assertThat(reading.get(10, TimeUnit.SECONDS)).isTrue();
  }
}

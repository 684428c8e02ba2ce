package io.lockstep.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.docs.DocsExamplesTest.FencedStore;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The read-sharing example of docs/read-write-mutex.md, run against a real server. */
@Timeout(60)
class ReadSharingDocsExamplesTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void readersOfOneProcess_shareOneReadNode() throws Exception {
    CuratorFramework client = zk.newClient();
    FencedStore store = new FencedStore();
    store.write("catalog", "v1", 0);
    ReadWriteMutex otherObject =
        ReadWriteMutex.builder(client, "/locks/catalog").localHandoff(8).build();
    CountDownLatch reading = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(1);
    List<List<String>> nodesWhileReading = new ArrayList<>();
    try (LockThread otherThread = new LockThread("other-reader")) {
      CompletableFuture<Void> other =
          otherThread.run(
              () -> {
                otherObject.readLock().acquire();
                try {
                  reading.countDown();
                  assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
                } finally {
                  otherObject.readLock().release();
                }
              });
      assertThat(reading.await(30, TimeUnit.SECONDS)).isTrue();
      Consumer<String> render =
          catalog ->
              nodesWhileReading.add(List.copyOf(otherObject.readLock().getParticipantNodes()));
      // docs/read-write-mutex.md: read sharing
      ReadWriteMutex shared =
          ReadWriteMutex.builder(client, "/locks/catalog").localHandoff(8).build();
      shared.readLock().acquire(); // joins the process's read node in memory if it holds
      try {
        render.accept(store.read("catalog"));
      } finally {
        shared.readLock().release(); // the node goes when the process's last reader lets go
      }
      // docs: end
      assertThat(nodesWhileReading)
          .as("two readers of one process, one read node")
          .singleElement()
          .satisfies(nodes -> assertThat(nodes).hasSize(1));
      assertThat(shared.readLock().getParticipantNodes()).as("the other reader holds").hasSize(1);
      done.countDown();
      other.get(30, TimeUnit.SECONDS);
      assertThat(shared.readLock().getParticipantNodes()).as("the last reader let go").isEmpty();
    }
  }
}

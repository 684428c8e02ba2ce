package io.lockstep.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.docs.DocsExamplesTest.FencedStore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testkit.LockstepZooKeeper;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The examples of docs/testing.md, run as shown (see {@link DocsExamplesTest} for the rules): the
 * test kit's extension and faults on a user's own service.
 */
@Timeout(60)
class TestingDocsExamplesTest {
  @RegisterExtension static final LockstepZooKeeper zk = LockstepZooKeeper.server();

  // docs/testing.md: the service
  // import io.lockstep.recipes.locks.LockHold;
  // import io.lockstep.recipes.locks.LockOwnershipLostException;
  // import io.lockstep.recipes.locks.ReentrantMutex;
  // import java.util.concurrent.atomic.AtomicInteger;
  // import org.apache.curator.framework.CuratorFramework;

  /** Exports batches while it holds its lock; stops as soon as the lock is lost. */
  static final class ExportJob {
    private final ReentrantMutex lock;
    private final FencedStore store;
    private final AtomicInteger batches = new AtomicInteger();
    private volatile LockHold hold;
    private volatile boolean stopped;

    ExportJob(CuratorFramework client, String path, FencedStore store) {
      this.lock = new ReentrantMutex(client, path);
      this.store = store;
    }

    void start() throws InterruptedException {
      hold = lock.hold();
      hold.whenLost().thenRun(() -> stopped = true); // the loss notice stops the loop
      Thread worker = new Thread(this::export, "export");
      worker.setDaemon(true);
      worker.start();
    }

    private void export() {
      try {
        while (!stopped) {
          int batch = batches.incrementAndGet();
          store.write("export", "batch " + batch, hold.fencingToken()); // throws once lost
          Thread.sleep(10);
        }
      } catch (LockOwnershipLostException | InterruptedException e) {
        stopped = true;
      }
    }

    LockHold hold() {
      return hold;
    }

    boolean stopped() {
      return stopped;
    }

    int batches() {
      return batches.get();
    }
  }

  // docs: end

  @Test
  void testing_theExtension_isAStaticField() {
    // docs/testing.md: the extension
    // import io.lockstep.testkit.LockstepZooKeeper;

    LockstepZooKeeper zk = LockstepZooKeeper.server(); // a static @RegisterExtension field
    // docs: end
    assertThat(zk).isNotSameAs(TestingDocsExamplesTest.zk);
  }

  /** What docs/testing.md says to register for a Spring Boot test. */
  @DynamicPropertySource
  static void zookeeper(DynamicPropertyRegistry registry) {
    registry.add("lockstep.zookeeper.connect-string", zk::connectString);
  }

  @Test
  void testing_theServiceStopsWriting_whenItsLockIsLost() throws Exception {
    // docs/testing.md: a lost lock
    // import static org.assertj.core.api.Assertions.assertThat;
    // import static org.awaitility.Awaitility.await;
    // import io.lockstep.recipes.locks.LockState;
    // import java.time.Duration;

    FencedStore store = new FencedStore(); // docs: ... the store the service writes to
    ExportJob job = new ExportJob(zk.newClient(), zk.path("export"), store);
    job.start();
    await().until(() -> job.batches() > 0);

    zk.faults().expireSessionOf(job.hold()); // as a pause longer than the session timeout would

    await().until(job::stopped);
    assertThat(job.hold().state()).isEqualTo(LockState.LOST);
    int written = job.batches();
    await().during(Duration.ofMillis(200)).until(() -> job.batches() == written);
    // docs: end
    job.hold().close();
  }

  @Test
  void testing_aShortDisconnect_putsTheHoldAtRisk_andItIsHeldAgain() throws Exception {
    // docs/testing.md: at risk
    // import io.lockstep.recipes.locks.LockHold;
    // import io.lockstep.recipes.locks.ReentrantMutex;
    // import java.time.Duration;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient();
    LockHold hold = new ReentrantMutex(client, zk.path("report")).hold();

    zk.faults().disconnect(client, Duration.ofSeconds(2)); // heals by itself after 2 s

    await().until(() -> hold.state() == LockState.AT_RISK); // within the session: not lost
    await().atMost(Duration.ofSeconds(20)).until(() -> hold.state() == LockState.HELD);
    // docs: end
    hold.close();
  }
}

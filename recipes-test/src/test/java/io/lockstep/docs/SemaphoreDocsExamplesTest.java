package io.lockstep.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.docs.DocsExamplesTest.FencedStore;
import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The examples of docs/semaphore.md, run against a real server. */
@Timeout(60)
class SemaphoreDocsExamplesTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  // ---- docs/semaphore.md ----

  @Test
  void countingSemaphore_aLeaseGuardsAFencedWrite_andIsGivenBack() throws Exception {
    // docs/semaphore.md: a lease
    // import io.lockstep.recipes.locks.CountingSemaphore;
    // import io.lockstep.recipes.locks.LockHold;
    // import java.time.Duration;
    // import java.util.Optional;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient(); // docs: ... a started client
    FencedStore store = new FencedStore(); // docs: ... your store, see getting-started.md
    CountingSemaphore exports = CountingSemaphore.builder(client, "/semaphores/exports", 4).build();
    Optional<LockHold> lease = exports.tryHold(Duration.ofSeconds(5));
    if (lease.isPresent()) {
      try (LockHold hold = lease.get()) {
        store.write("export-17", "running", hold.fencingToken()); // at most 4 exports at once
      }
    }
    // docs: end
    assertThat(lease).isPresent();
    assertThat(store.read("export-17")).isEqualTo("running");
    assertThat(exports.availablePermits()).isEqualTo(4);
  }
}

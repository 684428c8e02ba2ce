package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A timed try withdrawn while the create it sent again with its missing lock directory is still out
 * leaves no node behind: the create's late answer is tidied away (docs/failure-semantics.md,
 * "Budget runs out, ZooKeeper slow"). The path {@code LateWakeBudgetTest} does not take: there the
 * first create's answer (the directory is missing) comes after the withdrawal, so the create with
 * the directory is never sent.
 */
@Timeout(60)
class WithdrawnWhileCreatingTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void aTryWithdrawnWhileItsCreateWithTheDirectoryIsOut_leavesNoNode() throws Exception {
    CuratorFramework direct = zk.newClient();
    String path = zk.path("lock"); // its directory is missing; the test's root above it is there
    direct.create().forPath(path.substring(0, path.lastIndexOf('/')));
    TcpProxy proxy = zk.proxy();
    CuratorFramework client = zk.newClient(builder -> builder.connectString(proxy.connectString()));
    ReentrantMutex lock = new ReentrantMutex(client, path);
    long before = zk.requestsSoFar(client);

    // 300 ms a round trip: the first create's answer (no directory) comes at 300 ms, within the
    // budget and its grace (400 ms); the create sent again with the directory is answered at 600
    // ms, after the withdrawal. Its node must go then.
    proxy.setLatency(150);
    Optional<LockHold> hold = lock.tryHold(Duration.ofMillis(200));
    assertThat(hold).as("nothing answered in time").isEmpty();
    lock.close();

    Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(ZooKeeperExtension.childrenOrNone(direct, path))
                    .as("the late create's node deleted")
                    .isEmpty());
    proxy.setLatency(0);
    assertThat(zk.requestsSoFar(client) - before)
        .as(
            "sent: the create, the read behind it, the create with the directory and its read, and"
                + " the delete of its node once answered")
        .isEqualTo(5);
    zk.assertNothingLeft();
  }
}

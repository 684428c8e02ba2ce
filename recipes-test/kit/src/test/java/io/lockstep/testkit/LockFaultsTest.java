package io.lockstep.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The first rows of docs/testing.md's fault table on a hold of every kind of recipe, against the
 * embedded server, a test per cell: the session expired, the node deleted, a short disconnect. The
 * other rows are {@link LinkAndServerFaultsTest}'s (the two classes run side by side).
 */
@Timeout(120)
class LockFaultsTest {
  @RegisterExtension static final LockstepZooKeeper zk = LockstepZooKeeper.server();

  @AfterEach
  void leaveElections() {
    HoldKind.leaveElections();
  }

  @ParameterizedTest
  @EnumSource(HoldKind.class)
  void expireSessionOf_makesTheHoldLost(HoldKind kind) throws Exception {
    LockHold hold = kind.hold(zk.newClient(), zk.path("lock"));

    zk.faults().expireSessionOf(hold);

    assertThat(hold.whenLost().toCompletableFuture().get(20, TimeUnit.SECONDS)).isNotNull();
    assertThat(hold.state()).isEqualTo(LockState.LOST);
    assertThatThrownBy(hold::checkHeld).isInstanceOf(LockOwnershipLostException.class);
    hold.close();
  }

  @ParameterizedTest
  @EnumSource(HoldKind.class)
  void deleteNode_makesTheHoldLost(HoldKind kind) throws Exception {
    LockHold hold = kind.hold(zk.newClient(), zk.path("lock"));

    zk.faults().deleteNode(hold);

    assertThat(hold.whenLost().toCompletableFuture().get(20, TimeUnit.SECONDS)).isNotNull();
    assertThat(hold.state()).isEqualTo(LockState.LOST);
    hold.close();
  }

  @ParameterizedTest
  @EnumSource(HoldKind.class)
  void aShortDisconnect_putsTheHoldAtRisk_thenItIsHeldAgain(HoldKind kind) throws Exception {
    CuratorFramework client = zk.newClient();
    LockHold hold = kind.hold(client, zk.path("lock"));

    Fault fault = zk.faults().disconnect(client, Duration.ofSeconds(2));

    await().until(() -> hold.state() == LockState.AT_RISK);
    await().atMost(Duration.ofSeconds(20)).until(() -> hold.state() == LockState.HELD);
    assertThat(fault.isHealed()).isTrue();
    hold.checkHeld();
    hold.close();
  }
}

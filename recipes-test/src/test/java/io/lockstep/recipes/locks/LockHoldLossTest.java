package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.Leadership;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link LockHold#whenLost()} over every kind of hold: it completes with the loss when the session
 * expires, the node is deleted or the client is closed, on one of Lockstep's threads; it never
 * completes normally for a hold released normally.
 */
@Timeout(120)
class LockHoldLossTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void whenLost_sessionExpired_completesWithTheLoss_offTheEventThread(LockKind kind)
      throws Exception {
    zk.skipLeakCheck(); // the expired session's nodes are gone; its client reconnects
    CuratorFramework client = zk.newClient();
    LockHold hold = kind.newLock(client, zk.path("lock")).hold();
    AtomicReference<String> ranOn = new AtomicReference<>();
    CompletableFuture<LockOwnershipLostException> lost =
        hold.whenLost()
            .whenComplete((loss, failure) -> ranOn.set(Thread.currentThread().getName()))
            .toCompletableFuture();

    Sessions.expire(client, zk.server().getConnectString());

    LockOwnershipLostException loss = lost.get(30, TimeUnit.SECONDS);
    assertThat(loss).hasMessageContaining(zk.path("lock"));
    assertThat(hold.state()).isEqualTo(LockState.LOST);
    assertThat(ranOn.get()).doesNotContain("EventThread");
    hold.close();
    assertThat(hold.whenLost().toCompletableFuture().getNow(null)).isNotNull(); // stays lost
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void whenLost_nodeDeletedByAThirdParty_completesWithTheLoss(LockKind kind) throws Exception {
    assumeTrue(kind.detectsNodeDeletion(), "multi-locks notice only session loss");
    CuratorFramework admin = zk.newClient();
    FencedLock lock = kind.newLock(zk.newClient(), zk.path("lock"));
    LockHold hold = lock.hold();
    CompletionStage<LockOwnershipLostException> lost = hold.whenLost();

    for (String node : lock.getParticipantNodes()) {
      admin.delete().forPath(node);
    }

    assertThat(lost.toCompletableFuture().get(30, TimeUnit.SECONDS))
        .isInstanceOf(LockOwnershipLostException.class);
    assertThatThrownBy(hold::checkHeld).isInstanceOf(LockOwnershipLostException.class);
    hold.close();
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void whenLost_clientClosed_completesWithTheLoss(LockKind kind) throws Exception {
    CuratorFramework client = zk.newClient();
    LockHold hold = kind.newLock(client, zk.path("lock")).hold();
    CompletionStage<LockOwnershipLostException> lost = hold.whenLost();

    client.close();

    assertThat(lost.toCompletableFuture().get(30, TimeUnit.SECONDS)).isNotNull();
    hold.close();
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void whenLost_releasedNormally_neverCompletesNormally(LockKind kind) throws Exception {
    LockHold hold = kind.newLock(zk.newClient(), zk.path("lock")).hold();
    AtomicBoolean ran = new AtomicBoolean();
    CompletableFuture<Void> dependent =
        hold.whenLost().thenRun(() -> ran.set(true)).toCompletableFuture();

    hold.close();

    assertThatThrownBy(() -> dependent.get(30, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(CancellationException.class);
    assertThat(ran).isFalse();
    assertThat(hold.whenLost().toCompletableFuture().isCompletedExceptionally()).isTrue();
  }

  @ParameterizedTest
  @EnumSource(LockKind.class)
  void whenLost_askedOnlyAfterARelease_endsAtOnce(LockKind kind) throws Exception {
    LockHold hold = kind.newLock(zk.newClient(), zk.path("lock")).hold();

    hold.close(); // nobody waits for the loss stage: the release leaves it to whoever asks
    CompletableFuture<LockOwnershipLostException> asked = hold.whenLost().toCompletableFuture();

    assertThat(asked.isDone()).as("ended by the call that asked").isTrue();
    assertThatThrownBy(asked::get)
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(CancellationException.class)
        .hasMessageContaining("was released");
  }

  @Test
  void whenLost_cancellingTheCallersStage_leavesTheHoldsStageAlone() throws Exception {
    CuratorFramework client = zk.newClient();
    LockHold hold = new ReentrantMutex(client, zk.path("lock")).hold();

    hold.whenLost().toCompletableFuture().cancel(true);

    CompletableFuture<LockOwnershipLostException> other = hold.whenLost().toCompletableFuture();
    assertThat(other.isDone()).isFalse();
    client.close();
    assertThat(other.get(30, TimeUnit.SECONDS)).isNotNull();
    hold.close();
  }

  @Test
  void whenLost_cancelsTheWorkItProtects() throws Exception {
    CuratorFramework admin = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try (LockHold hold = lock.hold()) {
      CountDownLatch started = new CountDownLatch(1);
      Future<?> work =
          executor.submit(
              () -> {
                started.countDown();
                new CountDownLatch(1).await(); // works until cancelled
                return null;
              });
      hold.whenLost().thenRun(() -> work.cancel(true));
      started.await();

      admin.delete().forPath(lock.getParticipantNodes().iterator().next());

      await().until(work::isCancelled);
    } finally {
      executor.shutdownNow();
    }
  }

  @Test
  void whenLost_ofAComposedMultiMutex_completesWhenAnyOfItsLocksIsLost() throws Exception {
    CuratorFramework admin = zk.newClient();
    CuratorFramework client = zk.newClient();
    ReentrantMutex first = new ReentrantMutex(client, zk.path("a"));
    ReentrantMutex second = new ReentrantMutex(client, zk.path("b"));
    MultiMutex multi = new MultiMutex(List.of(first, second));
    LockHold hold = multi.hold();
    CompletionStage<LockOwnershipLostException> lost = hold.whenLost();

    admin.delete().forPath(second.getParticipantNodes().iterator().next());

    assertThat(lost.toCompletableFuture().get(30, TimeUnit.SECONDS)).isNotNull();
    hold.close();
    LockHold again = multi.hold();
    CompletableFuture<LockOwnershipLostException> unlost = again.whenLost().toCompletableFuture();
    again.close();
    assertThat(unlost.isCompletedExceptionally()).isTrue();
  }

  @Test
  void whenLost_ofASemaphoreLease_completesWhenItsNodeIsDeleted() throws Exception {
    CuratorFramework admin = zk.newClient();
    CountingSemaphore semaphore = new CountingSemaphore(zk.newClient(), zk.path("sem"), 2);
    LockHold lease = semaphore.acquire();
    CompletionStage<LockOwnershipLostException> lost = lease.whenLost();

    String leases = zk.path("sem") + "/leases"; // the semaphore's layout: its lease nodes
    for (String node : admin.getChildren().forPath(leases)) {
      admin.delete().forPath(leases + "/" + node);
    }

    assertThat(lost.toCompletableFuture().get(30, TimeUnit.SECONDS)).isNotNull();
    lease.close();
  }

  @Test
  void whenLost_ofALeadership_completesOnSessionExpiry_andNotWhenGivenUp() throws Exception {
    zk.skipLeakCheck(); // the election queues again after the loss; closed below
    CuratorFramework client = zk.newClient();
    try (LeaderElection election = LeaderElection.builder(client, zk.path("leader")).build()) {
      election.start();
      Leadership first = election.awaitLeadership();
      CompletableFuture<LockOwnershipLostException> firstLost =
          first.whenLost().toCompletableFuture();
      first.close();
      assertThatThrownBy(() -> firstLost.get(30, TimeUnit.SECONDS))
          .hasCauseInstanceOf(CancellationException.class);

      Leadership second = election.awaitLeadership(Duration.ofSeconds(30)).orElseThrow();
      CompletionStage<LockOwnershipLostException> secondLost = second.whenLost();
      Sessions.expire(client, zk.server().getConnectString());
      assertThat(secondLost.toCompletableFuture().get(30, TimeUnit.SECONDS)).isNotNull();
    }
  }
}

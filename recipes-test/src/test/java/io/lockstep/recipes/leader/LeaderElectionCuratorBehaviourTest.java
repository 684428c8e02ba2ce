package io.lockstep.recipes.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import io.lockstep.testkit.internal.TcpProxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The behaviours Curator's {@code TestLeaderLatch} and {@code TestLeaderSelector} pin, as far as
 * {@link LeaderElection} claims them, tested on our type (Curator's tests instantiate Curator's
 * classes). Each test names the Curator test it follows.
 */
@Timeout(60)
class LeaderElectionCuratorBehaviourTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private final List<LeaderElection> elections = new ArrayList<>();

  @AfterEach
  void closeElections() {
    elections.forEach(LeaderElection::close);
  }

  private LeaderElection started(String id) {
    return started(zk.newClient(), id);
  }

  private LeaderElection started(CuratorFramework client, String id) {
    LeaderElection election =
        LeaderElection.builder(client, zk.path("election")).participantId(id).build();
    elections.add(election);
    election.start();
    return election;
  }

  /** TestLeaderLatch.testUncreatedPathGetLeader. */
  @Test
  void participants_ofAPathNobodyCreated_areNone() {
    LeaderElection election =
        LeaderElection.builder(zk.newClient(), zk.path("never")).participantId("a").build();
    elections.add(election);

    assertThat(election.participants()).isEmpty();
  }

  /**
   * TestLeaderLatch.testLeadershipElectionWhenNodeDisappearsAfterChildrenAreRetrieved and
   * testWatchedNodeDeletedOnReconnect: a node deleted under the election (by an operator) ends that
   * leadership; the next participant leads and the old one queues again.
   */
  @Test
  void theLeadersNodeDeletedByAnOperator_isLost_theNextLeads_andTheOldQueuesAgain()
      throws Exception {
    CuratorFramework operator = zk.newClient();
    Recorder heard = new Recorder();
    LeaderElection a = started("a");
    a.addListener(heard);
    Leadership first = a.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    long epoch = first.fencingToken();
    LeaderElection b = started("b");
    await().until(() -> b.participants().size() == 2);

    String leaderNode =
        operator.getChildren().forPath(zk.path("election")).stream()
            .filter(
                n -> {
                  try {
                    return new String(operator.getData().forPath(zk.path("election") + "/" + n))
                        .equals("a");
                  } catch (Exception e) {
                    throw new IllegalStateException(e);
                  }
                })
            .findFirst()
            .orElseThrow();
    operator.delete().forPath(zk.path("election") + "/" + leaderNode);

    Leadership second = b.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    await().until(() -> heard.heard("lost"));
    assertThat(first.state()).isEqualTo(LockState.LOST);
    assertThat(second.fencingToken()).isGreaterThan(epoch);
    await().until(() -> b.participants().size() == 2);
    assertThat(b.participants()).extracting(Participant::id).containsExactly("b", "a");
  }

  /**
   * TestLeaderLatch.testLeadershipElectionWhenNodeDisappearsAfterChildrenAreRetrieved, for the
   * waiter right behind the leader: its node deleted under it, it must not be elected when the
   * leader leaves (the engine's shortcut would grant it on the leader's deletion, beside the
   * participant behind it and with the same epoch); it queues again instead.
   */
  @Test
  void aWaiterWhoseNodeWasDeleted_isNotElectedBesideTheNext_andQueuesAgain() throws Exception {
    CuratorFramework operator = zk.newClient();
    String path = zk.path("election");
    Recorder secondHeard = new Recorder();
    Recorder thirdHeard = new Recorder();
    LeaderElection first = started("first");
    Leadership leadership = first.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    LeaderElection second = started("second");
    second.addListener(secondHeard);
    await().until(() -> first.participants().size() == 2);
    LeaderElection third = started("third");
    third.addListener(thirdHeard);
    await().until(() -> first.participants().size() == 3);
    for (String node : operator.getChildren().forPath(path)) {
      byte[] id = operator.getData().forPath(path + "/" + node);
      if (new String(id, StandardCharsets.UTF_8).equals("second")) {
        operator.delete().forPath(path + "/" + node);
      }
    }

    leadership.close();

    assertThat(third.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    await()
        .untilAsserted(
            () ->
                assertThat(third.participants())
                    .extracting(Participant::id)
                    .containsExactlyInAnyOrder("third", "first", "second"));
    assertThat(third.participants().get(0)).isEqualTo(new Participant("third", true));
    assertThat(second.isLeader()).isFalse();
    assertThat(secondHeard.events).as("the waiter whose node was deleted").isEmpty();
    await().until(() -> thirdHeard.heard("elected"));
  }

  /**
   * TestLeaderLatch.testCorrectWatching: a waiter in the middle leaves; the leader stays, and the
   * last waiter, which watched it, still leads next.
   */
  @Test
  void aWaiterInTheMiddleLeaves_theLeaderStays_andTheLastLeadsNext() throws Exception {
    LeaderElection a = started("a");
    Leadership leadership = a.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    LeaderElection b = started("b");
    await().until(() -> a.participants().size() == 2);
    LeaderElection c = started("c");
    await().until(() -> a.participants().size() == 3);

    b.close();

    assertThat(a.participants()).extracting(Participant::id).containsExactly("a", "c");
    assertThat(a.isLeader()).isTrue();
    assertThat(c.isLeader()).isFalse();
    leadership.close();
    assertThat(c.awaitLeadership(Duration.ofSeconds(10))).isPresent();
  }

  /**
   * TestLeaderLatch.testWaiting and TestLeaderSelector.testRotatingLeadership: many participants
   * each lead in turn, never two at once.
   */
  @Test
  void tenParticipants_eachLeadOnce_neverTwoAtOnce() throws Exception {
    AtomicInteger leading = new AtomicInteger();
    AtomicInteger mostAtOnce = new AtomicInteger();
    List<CompletableFuture<Void>> done = new ArrayList<>();
    CuratorFramework client = zk.newClient();
    for (int i = 0; i < 10; i++) {
      LeaderElection election = started(client, "p" + i);
      done.add(
          election
              .leadershipAsync()
              .thenAccept(
                  leadership -> {
                    mostAtOnce.accumulateAndGet(leading.incrementAndGet(), Math::max);
                    leading.decrementAndGet();
                    election.close(); // leave: the next one leads
                  })
              .toCompletableFuture());
    }

    CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
    assertThat(mostAtOnce).hasValue(1);
    assertThat(elections.get(0).toString()).contains("election");
    // the election's directory is a container: the server may reap it once the last one left
    assertThat(ZooKeeperExtension.childrenOrNone(client, zk.path("election"))).isEmpty();
  }

  /** TestLeaderSelector.testKillSessionThenCloseShouldElectNewLeader. */
  @Test
  void aLeaderWhoseSessionExpired_thenClosed_leavesAnotherElected() throws Exception {
    zk.skipLeakCheck();
    CuratorFramework client = zk.newClient();
    LeaderElection a = started(client, "a");
    assertThat(a.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    LeaderElection b = started("b");
    await().until(() -> b.participants().size() == 2);

    Sessions.expire(client, zk.server().getConnectString());
    a.close();

    assertThat(b.awaitLeadership(Duration.ofSeconds(20))).isPresent();
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> assertThat(b.participants()).extracting(Participant::id).containsExactly("b"));
  }

  /**
   * TestLeaderLatch.testProperCloseWithoutConnectionEstablished and testNoServerAtStart: an
   * election whose client never reached ZooKeeper closes at once and leaves nothing; one that stays
   * started leads once ZooKeeper is reachable.
   */
  @Test
  void neverConnected_closesAtOnce_andAStartedOneLeadsOnceReachable() throws Exception {
    try (TcpProxy proxy = TcpProxy.start("127.0.0.1", zk.server().getPort())) {
      proxy.cut();
      CuratorFramework client =
          CuratorFrameworkFactory.builder()
              .connectString(proxy.connectString())
              .sessionTimeoutMs(10_000)
              .connectionTimeoutMs(1_000)
              .retryPolicy(new RetryNTimes(2, 100))
              .build();
      client.start();
      try {
        LeaderElection closed = started(client, "closed");
        LeaderElection waiting = started(client, "waiting");
        long start = System.nanoTime();
        closed.close();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(1_500);
        assertThat(waiting.awaitLeadership(Duration.ofMillis(300))).isEmpty();

        proxy.heal();

        assertThat(waiting.awaitLeadership(Duration.ofSeconds(30))).isPresent();
        assertThat(waiting.participants()).extracting(Participant::id).containsExactly("waiting");
        waiting.close();
      } finally {
        client.close();
      }
    }
  }
}

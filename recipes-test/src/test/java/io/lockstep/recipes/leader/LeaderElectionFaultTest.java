package io.lockstep.recipes.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A participant cut off from ZooKeeper: at risk, restored or lost, and bounded waits. */
@Timeout(90)
class LeaderElectionFaultTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private final List<LeaderElection> elections = new ArrayList<>();
  private TcpProxy proxy;

  @BeforeEach
  void startProxy() {
    proxy = zk.proxy(); // closed by the extension after this class's @AfterEach
  }

  @AfterEach
  void stop() {
    proxy.heal();
    elections.forEach(LeaderElection::close);
  }

  private CuratorFramework throughProxy(int sessionTimeoutMs) {
    return zk.newClient(
        b ->
            b.connectString(proxy.connectString())
                .sessionTimeoutMs(sessionTimeoutMs)
                .connectionTimeoutMs(2_000)
                .retryPolicy(new RetryNTimes(3, 100)));
  }

  private LeaderElection election(CuratorFramework client, String id, Recorder heard) {
    LeaderElection election =
        LeaderElection.builder(client, zk.path("election")).participantId(id).build();
    elections.add(election);
    if (heard != null) {
      election.addListener(heard);
    }
    election.start();
    return election;
  }

  @Test
  void silentlyPartitionedLeader_isAtRiskBeforeAnotherIsElected_thenLost_thenQueuesAgain()
      throws Exception {
    zk.skipLeakCheck();
    Recorder leaderHeard = new Recorder();
    Recorder otherHeard = new Recorder();
    LeaderElection a = election(throughProxy(4_000), "a", leaderHeard);
    Leadership first = a.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    LeaderElection b = election(zk.newClient(), "b", otherHeard);
    await().until(() -> b.participants().size() == 2);

    proxy.blackhole();

    Leadership second = b.awaitLeadership(Duration.ofSeconds(30)).orElseThrow();
    await().until(() -> otherHeard.heard("elected"));
    assertThat(leaderHeard.firstNanos("atRisk"))
        .as("the partitioned leader heard atRisk before the other was elected")
        .isPositive()
        .isLessThan(otherHeard.firstNanos("elected"));
    assertThat(a.isLeader()).as("not leading while at risk").isFalse();

    proxy.heal();
    await().atMost(Duration.ofSeconds(30)).until(() -> leaderHeard.heard("lost"));
    assertThat(first.state()).isEqualTo(LockState.LOST);
    assertThat(leaderHeard.kinds()).startsWith("elected", "atRisk", "lost");
    await().atMost(Duration.ofSeconds(30)).until(() -> b.participants().size() == 2);
    assertThat(b.participants()).extracting(Participant::id).containsExactly("b", "a");
    assertThat(second.state()).isEqualTo(LockState.HELD);
  }

  @Test
  void aBriefCut_withinTheSession_isAtRiskThenRestored_sameEpoch() throws Exception {
    Recorder heard = new Recorder();
    LeaderElection a = election(throughProxy(20_000), "a", heard);
    Leadership leadership = a.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    long epoch = leadership.fencingToken();

    proxy.cut();
    await().atMost(Duration.ofSeconds(10)).until(() -> heard.heard("atRisk"));
    assertThat(leadership.state()).isEqualTo(LockState.AT_RISK);
    assertThat(a.isLeader()).isFalse();
    assertThat(a.leadership()).containsSame(leadership);
    proxy.heal();

    await().atMost(Duration.ofSeconds(20)).until(() -> heard.heard("restored"));
    assertThat(heard.kinds()).containsExactly("elected", "atRisk", "restored");
    assertThat(heard.events).extracting(Recorder.Event::epoch).containsOnly(epoch);
    assertThat(a.isLeader()).isTrue();
    assertThat(leadership.fencingToken()).isEqualTo(epoch);
  }

  @Test
  void awaitLeadership_withZooKeeperUnreachable_returnsWithinItsBudget_andLeadsOnceReachable()
      throws Exception {
    CuratorFramework client = throughProxy(20_000);
    proxy.cut();
    LeaderElection a = election(client, "a", null);

    for (Duration budget : List.of(Duration.ZERO, Duration.ofMillis(500), Duration.ofSeconds(2))) {
      long start = System.nanoTime();
      Optional<Leadership> none = a.awaitLeadership(budget);
      long overMillis =
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) - budget.toMillis();

      assertThat(none).isEmpty();
      assertThat(overMillis).as("time over a budget of %s", budget).isLessThan(250);
    }

    proxy.heal();
    assertThat(a.awaitLeadership(Duration.ofSeconds(30))).isPresent();
  }

  @Test
  void close_whileUnreachable_returnsBounded_andTheNodeGoesOnceReachable() throws Exception {
    LeaderElection leader = election(zk.newClient(), "leader", null);
    assertThat(leader.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    LeaderElection cutOff = election(throughProxy(30_000), "cut-off", null);
    await().until(() -> leader.participants().size() == 2);

    proxy.blackhole();
    long start = System.nanoTime();
    cutOff.close();
    long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(tookMillis).as("at most the connection timeout, and a little").isLessThan(3_000);
    proxy.heal();
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(leader.participants())
                    .extracting(Participant::id)
                    .containsExactly("leader"));
  }

  @Test
  void aLeaderWhoseServerRestarts_isAtRisk_andLeadsAgainAfterwards() throws Exception {
    zk.skipLeakCheck();
    Recorder heard = new Recorder();
    LeaderElection a = election(zk.newClient(), "a", heard);
    long epoch = a.awaitLeadership(Duration.ofSeconds(10)).orElseThrow().fencingToken();

    zk.server().stop();
    await().atMost(Duration.ofSeconds(20)).until(() -> heard.heard("atRisk"));
    zk.server().restart();

    await().atMost(Duration.ofSeconds(30)).until(a::isLeader);
    assertThat(heard.kinds()).startsWith("elected", "atRisk");
    Leadership now = a.leadership().orElseThrow();
    assertThat(now.fencingToken())
        .as("the same leadership, or a later one")
        .isGreaterThanOrEqualTo(epoch);
  }
}

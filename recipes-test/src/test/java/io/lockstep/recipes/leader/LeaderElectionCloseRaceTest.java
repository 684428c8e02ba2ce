package io.lockstep.recipes.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two ways out of one participant at once ({@link LeaderElection#close()}, {@link
 * Leadership#close()}, or the election's close twice): whichever returns, the participant's node is
 * gone from the server when it does, as each promises while ZooKeeper is reachable. The leader's
 * link is slow (a second each way), so a close that returns before the delete was confirmed finds
 * the node still there.
 */
@Timeout(60)
class LeaderElectionCloseRaceTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final long LATENCY_MILLIS = 1_000;

  private TcpProxy proxy;
  private CuratorFramework direct;
  private String path;
  private LeaderElection election;
  private Leadership leadership;

  @BeforeEach
  void electOverASlowLink() throws Exception {
    proxy = zk.proxy();
    direct = zk.newClient();
    path = zk.path("election");
    CuratorFramework slow =
        zk.newClient(
            b ->
                b.connectString(proxy.connectString())
                    .sessionTimeoutMs(30_000)
                    .connectionTimeoutMs(10_000)
                    .retryPolicy(new RetryNTimes(3, 100)));
    election = LeaderElection.builder(slow, path).participantId("a").build();
    election.start();
    leadership = election.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    proxy.setLatency(LATENCY_MILLIS);
  }

  @AfterEach
  void fastAgain() {
    proxy.setLatency(0);
    election.close();
  }

  private void assertNodeGone() throws Exception {
    assertThat(ZooKeeperExtension.childrenOrNone(direct, path))
        .as("the participant's node, when the close returned")
        .isEmpty();
  }

  @Test
  void electionClose_whileTheLeadershipIsGivenUp_returnsOnceTheNodeIsGone() throws Exception {
    CompletableFuture<Void> givingUp = CompletableFuture.runAsync(leadership::close);
    await().until(() -> election.leadership().isEmpty()); // given up: its delete is under way

    election.close();

    assertNodeGone();
    givingUp.get(30, TimeUnit.SECONDS);
  }

  @Test
  void leadershipClose_whileTheElectionCloses_returnsOnceTheNodeIsGone() throws Exception {
    CompletableFuture<Void> closing = CompletableFuture.runAsync(election::close);
    await().until(() -> leadership.state() == LockState.RELEASED); // the close took the term

    leadership.close();

    assertNodeGone();
    closing.get(30, TimeUnit.SECONDS);
  }

  @Test
  void electionClose_whileAnotherCloseOfItRuns_returnsOnceTheNodeIsGone() throws Exception {
    CompletableFuture<Void> closing = CompletableFuture.runAsync(election::close);
    await().until(() -> leadership.state() == LockState.RELEASED);

    election.close();

    assertNodeGone();
    closing.get(30, TimeUnit.SECONDS);
  }
}

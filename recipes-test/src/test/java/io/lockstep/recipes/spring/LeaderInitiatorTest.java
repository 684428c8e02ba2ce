package io.lockstep.recipes.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * A real Spring Integration component on the registry: {@code LockRegistryLeaderInitiator}, two
 * instances, each with its own client and registry, electing a leader for one role. The extension
 * checks after each test that nothing (no ephemeral node, no watch) is left on the server.
 */
@Timeout(120)
class LeaderInitiatorTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final String ROLE = "billing-run";

  /** One instance of the service: its client, its registry, its initiator. */
  private static final class Instance {
    final String name;
    final CuratorFramework client;
    final LockRegistryLeaderInitiator initiator;

    Instance(String name, CuratorFramework client, String root, List<String> events) {
      this.name = name;
      this.client = client;
      this.initiator =
          new LockRegistryLeaderInitiator(
              new LockstepLockRegistry(client, root),
              new DefaultCandidate(name, ROLE) {
                @Override
                public void onGranted(Context context) {
                  events.add(name + " granted");
                }

                @Override
                public void onRevoked(Context context) {
                  events.add(name + " revoked");
                }
              });
      initiator.setHeartBeatMillis(200);
      initiator.setBusyWaitMillis(50);
    }

    boolean isLeader() {
      return initiator.getContext().isLeader();
    }
  }

  @Test
  void oneLeaderAtATime_andLeadershipMoves_whenTheLeadersSessionIsLost() throws Exception {
    String root = zk.path("leaders");
    List<String> events = new CopyOnWriteArrayList<>();
    Instance a = new Instance("a", zk.newClient(), root, events);
    Instance b = new Instance("b", zk.newClient(), root, events);
    List<Instance> both = List.of(a, b);
    try {
      a.initiator.start();
      b.initiator.start();

      await("a leader is elected").until(() -> leaders(both) == 1);
      await("never two leaders, and the leader stays")
          .during(Duration.ofSeconds(1))
          .atMost(Duration.ofSeconds(5))
          .until(() -> leaders(both) == 1);
      Instance leader = a.isLeader() ? a : b;
      Instance follower = leader == a ? b : a;
      InterProcessMutex lockOfTheRole = new InterProcessMutex(zk.newClient(), root + "/" + ROLE);
      assertThat(lockOfTheRole.getParticipantNodes())
          .as("the leader holds the lock of the role; the follower retries with timed attempts")
          .isNotEmpty();

      Sessions.expire(leader.client, zk.server().getConnectString());

      await("leadership moves to the other instance")
          .atMost(Duration.ofSeconds(20))
          .until(() -> follower.isLeader() && !leader.isLeader());
      await("the old leader, reconnected in a new session, stays a follower")
          .during(Duration.ofSeconds(1))
          .atMost(Duration.ofSeconds(5))
          .until(() -> follower.isLeader() && !leader.isLeader());
      assertThat(events)
          .containsSubsequence(leader.name + " granted", follower.name + " granted")
          .contains(leader.name + " revoked");
    } finally {
      a.initiator.stop();
      b.initiator.stop();
    }
    await("no leader once stopped").until(() -> leaders(both) == 0);
    assertThat(events.stream().filter(e -> e.endsWith("granted")).count())
        .as("each grant is matched by a revocation once stopped")
        .isEqualTo(events.stream().filter(e -> e.endsWith("revoked")).count());
  }

  @Test
  void aLeaderThatYields_handsLeadershipToTheOther_neverTwoAtOnce() throws Exception {
    String root = zk.path("leaders");
    List<String> events = new CopyOnWriteArrayList<>();
    Instance a = new Instance("a", zk.newClient(), root, events);
    Instance b = new Instance("b", zk.newClient(), root, events);
    List<Instance> both = List.of(a, b);
    try {
      a.initiator.start();
      await("a leads alone").until(a::isLeader);
      b.initiator.start();
      await("b follows").during(Duration.ofMillis(500)).until(() -> a.isLeader() && !b.isLeader());

      for (int round = 0; round < 3; round++) {
        Instance leader = a.isLeader() ? a : b;
        Instance follower = leader == a ? b : a;
        leader.initiator.getContext().yield();
        await("leadership moves")
            .atMost(Duration.ofSeconds(10))
            .until(() -> leaders(both) <= 1 && follower.isLeader());
      }
      assertThat(events).containsSubsequence("a granted", "b granted", "a granted", "b granted");
    } finally {
      a.initiator.stop();
      b.initiator.stop();
    }
    await("no leader once stopped").until(() -> leaders(both) == 0);
  }

  private static int leaders(List<Instance> instances) {
    int leaders = (int) instances.stream().filter(Instance::isLeader).count();
    assertThat(leaders).as("leaders at once").isLessThanOrEqualTo(1);
    return leaders;
  }
}

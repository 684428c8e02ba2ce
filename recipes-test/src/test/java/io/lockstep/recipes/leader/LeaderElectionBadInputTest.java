package io.lockstep.recipes.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Bad arguments and misuse fail fast, name what is wrong, and create nothing on the server. */
@Timeout(30)
class LeaderElectionBadInputTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void nullOrInvalidArguments_areNamed_andNothingIsCreated() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("election");

    assertThatThrownBy(() -> LeaderElection.builder(null, path))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("client");
    assertThatThrownBy(() -> LeaderElection.builder(client, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("path");
    for (String bad : new String[] {"", "relative", "/trailing/", "/a//b", "/a/./b"}) {
      assertThatThrownBy(() -> LeaderElection.builder(client, bad))
          .as("path '%s'", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("path");
    }
    LeaderElection.Builder builder = LeaderElection.builder(client, path);
    assertThatThrownBy(() -> builder.participantId(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("participantId");
    assertThatThrownBy(() -> builder.layout(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("layout");
    LeaderElection built = builder.build();
    assertThatThrownBy(() -> built.addListener(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("listener");

    assertThat(client.checkExists().forPath(path)).as("nothing created").isNull();
    assertThat(client.checkExists().forPath(path.substring(0, path.lastIndexOf('/')))).isNull();
  }

  @Test
  void waitingBeforeStart_startingTwice_andUseAfterClose_areRefused() throws Exception {
    CuratorFramework client = zk.newClient();
    LeaderElection election = LeaderElection.builder(client, zk.path("election")).build();

    assertThatThrownBy(() -> election.awaitLeadership(Duration.ofSeconds(1)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("not started");
    assertThatThrownBy(election::leadershipAsync)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("not started");
    assertThat(election.participants()).isEmpty();
    assertThat(election.isLeader()).isFalse();
    assertThat(election.leadership()).isEmpty();
    assertThat(client.checkExists().forPath(zk.path("election"))).isNull();

    election.start();
    assertThatThrownBy(election::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already started");
    assertThatThrownBy(() -> election.awaitLeadership(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("timeout");
    assertThatThrownBy(() -> election.awaitLeadership(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("timeout");
    assertThat(election.awaitLeadership(Duration.ofSeconds(10))).isPresent();

    election.close();
    election.close(); // again: nothing more

    assertThat(election.isLeader()).isFalse();
    assertThat(election.leadership()).isEmpty();
    for (Runnable use :
        new Runnable[] {
          election::start,
          election::leadershipAsync,
          election::participants,
          () -> election.addListener(new Recorder()),
        }) {
      assertThatThrownBy(use::run)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("closed");
    }
    assertThatThrownBy(election::awaitLeadership)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
  }

  @Test
  void closingBeforeStart_leavesNothing_andRefusesStart() throws Exception {
    CuratorFramework client = zk.newClient();
    LeaderElection election = LeaderElection.builder(client, zk.path("election")).build();

    election.close();

    assertThatThrownBy(election::start).isInstanceOf(IllegalStateException.class);
    assertThat(client.checkExists().forPath(zk.path("election"))).isNull();
  }
}

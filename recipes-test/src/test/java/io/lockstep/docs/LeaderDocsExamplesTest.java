package io.lockstep.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.docs.DocsExamplesTest.FencedStore;
import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.LeaderLayout;
import io.lockstep.recipes.leader.Leadership;
import io.lockstep.recipes.leader.LeadershipListener;
import io.lockstep.recipes.leader.Participant;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The examples of {@code docs/leader-election.md}, run; see {@link DocsExamplesTest}. */
@Timeout(60)
class LeaderDocsExamplesTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void leaderElection_basicUse_writesWithTheEpoch_andStepsDown() throws Exception {
    LeaderElection other =
        LeaderElection.builder(zk.newClient(), "/services/billing/leader")
            .participantId("billing-2")
            .build();
    // docs/leader-election.md: basic use
    // import io.lockstep.recipes.leader.LeaderElection;
    // import io.lockstep.recipes.leader.Leadership;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient(); // docs: ... a started client
    FencedStore store = new FencedStore(); // docs: ... see docs/getting-started.md
    LeaderElection election =
        LeaderElection.builder(client, "/services/billing/leader")
            .participantId("billing-1")
            .build();
    election.start(); // enters the queue, returns at once
    Leadership leadership = election.awaitLeadership();
    store.write("run", "started", leadership.fencingToken()); // refused once a newer leader wrote
    leadership.close(); // step down: the next participant leads, this one queues again
    // docs: end
    try {
      assertThat(store.read("run")).isEqualTo("started");
      // alone in the queue: it queued again, and leads again
      Leadership next = election.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
      long epoch = next.fencingToken();
      other.start();
      await().until(() -> election.participants().size() == 2);
      assertThat(election.participants().get(0)).isEqualTo(new Participant("billing-1", true));
      next.close();
      Leadership others = other.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
      store.write("run", "done", others.fencingToken());
      assertThat(others.fencingToken()).isGreaterThan(epoch);
      assertThatThrownBy(() -> store.write("run", "stale", epoch))
          .isInstanceOf(IllegalStateException.class);
    } finally {
      other.close();
      election.close();
    }
  }

  @Test
  void leaderElection_listening_pausesWhileNotLeading() throws Exception {
    CuratorFramework client = zk.newClient();
    LeaderElection election = LeaderElection.builder(client, "/services/billing/leader").build();
    // docs/leader-election.md: listening
    // import io.lockstep.recipes.leader.LeadershipListener;
    // import java.util.concurrent.atomic.AtomicBoolean;

    AtomicBoolean mayAct = new AtomicBoolean();
    election.addListener(
        new LeadershipListener() {
          @Override
          public void elected(Leadership leadership) {
            mayAct.set(true);
          }

          @Override
          public void atRisk(Leadership leadership) {
            mayAct.set(false); // the connection is suspended: another may be elected soon
          }

          @Override
          public void restored(Leadership leadership) {
            mayAct.set(true); // reconnected in the same session, the node still ours
          }

          @Override
          public void lost(Leadership leadership) {
            mayAct.set(false); // lost (state LOST) or given up (state RELEASED)
          }
        });
    // docs: end
    try {
      election.start();
      await().untilTrue(mayAct);
      election.leadership().orElseThrow().close();
      await().untilTrue(mayAct); // queued again, and alone: elected again
      assertThat(election.isLeader()).isTrue();
    } finally {
      election.close();
    }
    await().untilFalse(mayAct);
  }

  @Test
  void leaderElection_selectorLayout_electsOneLeaderWithCuratorsSelector() throws Exception {
    CuratorFramework client = zk.newClient();
    LeaderSelector curator =
        new LeaderSelector(
            zk.newClient(),
            "/services/billing/selector",
            new LeaderSelectorListenerAdapter() {
              @Override
              public void takeLeadership(CuratorFramework c) throws Exception {
                Thread.currentThread().join(); // leads until interrupted by close()
              }
            });
    curator.start();
    await().until(curator::hasLeadership);
    // docs/leader-election.md: layouts
    // import io.lockstep.recipes.leader.LeaderLayout;

    LeaderElection selectorPeer =
        LeaderElection.builder(client, "/services/billing/selector")
            .participantId("billing-1")
            .layout(LeaderLayout.LEADER_SELECTOR) // the path's other instances run LeaderSelector
            .build();
    // docs: end
    try {
      selectorPeer.start();
      await().until(() -> selectorPeer.participants().size() == 2);
      assertThat(selectorPeer.awaitLeadership(Duration.ofMillis(300))).isEmpty();
      curator.close();
      assertThat(selectorPeer.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    } finally {
      selectorPeer.close();
    }
  }
}

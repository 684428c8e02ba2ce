package io.lockstep.recipes.leader.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.LeaderLayout;
import io.lockstep.recipes.leader.Leadership;
import io.lockstep.recipes.leader.Participant;
import io.lockstep.testing.ZooKeeperExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A rolling upgrade of a leader election: Curator 5.9.0's {@code LeaderLatch} and {@code
 * LeaderSelector} and Lockstep's {@link LeaderElection} of the matching layout, on one path, from
 * separate clients, elect one leader between them and hand leadership back and forth.
 */
@Timeout(90)
class CuratorLeaderInteropTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      try {
        toClose.get(i).close();
      } catch (IllegalStateException alreadyClosed) {
        // Curator's recipes refuse a second close
      }
    }
  }

  private LeaderElection ours(String id, LeaderLayout layout) {
    LeaderElection election =
        LeaderElection.builder(zk.newClient(), zk.path("leader"))
            .participantId(id)
            .layout(layout)
            .build();
    toClose.add(election);
    election.start();
    return election;
  }

  private LeaderLatch curatorLatch(String id) throws Exception {
    LeaderLatch latch = new LeaderLatch(zk.newClient(), zk.path("leader"), id);
    latch.start();
    toClose.add(latch);
    return latch;
  }

  // ---- LeaderLatch and LEADER_LATCH ----

  @Test
  void curatorLatchFirst_thenOurs_oneLeader_andLeadershipPassesBothWays() throws Exception {
    LeaderLatch curator = curatorLatch("curator");
    assertThat(curator.await(10, TimeUnit.SECONDS)).isTrue();
    LeaderElection ours = ours("ours", LeaderLayout.LEADER_LATCH);
    await().until(() -> curator.getParticipants().size() == 2);

    assertThat(ours.awaitLeadership(Duration.ofMillis(500))).isEmpty();
    assertThat(curator.hasLeadership()).isTrue();
    assertThat(ours.participants())
        .containsExactly(new Participant("curator", true), new Participant("ours", false));
    assertThat(curator.getParticipants())
        .extracting(p -> p.getId() + "/" + p.isLeader())
        .containsExactly("curator/true", "ours/false");

    curator.close();
    Leadership leadership = ours.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();

    LeaderLatch next = curatorLatch("curator-2");
    await().until(() -> next.getParticipants().size() == 2);
    assertThat(next.await(500, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(ours.isLeader()).isTrue();

    leadership.close(); // ours steps down and queues again behind curator-2
    assertThat(next.await(10, TimeUnit.SECONDS)).isTrue();
    await().until(() -> next.getParticipants().size() == 2);
    assertThat(ours.isLeader()).isFalse();
    assertThat(next.getParticipants())
        .extracting(p -> p.getId() + "/" + p.isLeader())
        .containsExactly("curator-2/true", "ours/false");
  }

  @Test
  void oursFirst_thenCuratorLatch_oneLeader_andCuratorLeadsOnceWeClose() throws Exception {
    LeaderElection ours = ours("ours", LeaderLayout.LEADER_LATCH);
    assertThat(ours.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    LeaderLatch curator = curatorLatch("curator");
    await().until(() -> curator.getParticipants().size() == 2);

    assertThat(curator.await(500, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(curator.getLeader().getId()).isEqualTo("ours");

    ours.close();

    assertThat(curator.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(curator.getParticipants()).hasSize(1);
  }

  @Test
  void theDefaultEmptyId_isWrittenAsCuratorsLatchWritesIt() throws Exception {
    CuratorFramework client = zk.newClient();
    LeaderLatch curator = new LeaderLatch(client, zk.path("leader"));
    curator.start();
    toClose.add(curator);
    assertThat(curator.await(10, TimeUnit.SECONDS)).isTrue();
    LeaderElection ours =
        LeaderElection.builder(zk.newClient(), zk.path("leader")).build(); // LEADER_LATCH, ""
    toClose.add(ours);
    ours.start();
    await().until(() -> curator.getParticipants().size() == 2);

    List<String> children = client.getChildren().forPath(zk.path("leader"));
    assertThat(children)
        .allMatch(n -> n.matches("_c_[0-9a-f-]{36}-latch-\\d{10}"), "Curator's latch layout");
    for (String child : children) {
      assertThat(client.getData().forPath(zk.path("leader") + "/" + child)).isEmpty();
    }
    assertThat(ours.participants())
        .containsExactly(new Participant("", true), new Participant("", false));
  }

  // ---- LeaderSelector (autoRequeue) and LEADER_SELECTOR ----

  /** A Curator selector that leads until told to give up, and requeues. */
  private static final class Selector extends LeaderSelectorListenerAdapter {
    final Semaphore leading = new Semaphore(0);
    final Semaphore giveUp = new Semaphore(0);
    final AtomicInteger terms = new AtomicInteger();
    final LeaderSelector selector;

    Selector(CuratorFramework client, String path, String id) {
      selector = new LeaderSelector(client, path, this);
      selector.setId(id);
      selector.autoRequeue();
    }

    @Override
    public void takeLeadership(CuratorFramework client) throws Exception {
      terms.incrementAndGet();
      leading.release();
      giveUp.acquire();
    }
  }

  private Selector curatorSelector(String id) {
    Selector selector = new Selector(zk.newClient(), zk.path("leader"), id);
    selector.selector.start();
    toClose.add(selector.selector);
    return selector;
  }

  @Test
  void curatorSelectorFirst_thenOurs_oneLeader_andLeadershipPassesBothWays() throws Exception {
    Selector curator = curatorSelector("curator");
    assertThat(curator.leading.tryAcquire(10, TimeUnit.SECONDS)).isTrue();
    LeaderElection ours = ours("ours", LeaderLayout.LEADER_SELECTOR);
    await().until(() -> ours.participants().size() == 2);

    assertThat(ours.awaitLeadership(Duration.ofMillis(500))).isEmpty();
    assertThat(ours.participants())
        .containsExactly(new Participant("curator", true), new Participant("ours", false));

    curator.giveUp.release(); // takeLeadership returns: it steps down and requeues
    Leadership leadership = ours.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    await().until(() -> curator.selector.getParticipants().size() == 2);
    assertThat(curator.selector.hasLeadership()).isFalse();
    assertThat(curator.leading.tryAcquire(500, TimeUnit.MILLISECONDS)).isFalse();

    leadership.close();
    assertThat(curator.leading.tryAcquire(10, TimeUnit.SECONDS)).isTrue();
    assertThat(curator.terms).hasValue(2);
    await().until(() -> !ours.isLeader() && ours.participants().size() == 2);
    assertThat(curator.selector.getParticipants())
        .extracting(p -> p.getId() + "/" + p.isLeader())
        .containsExactly("curator/true", "ours/false");
    curator.giveUp.release();
    assertThat(ours.awaitLeadership(Duration.ofSeconds(10))).isPresent();
  }

  @Test
  void oursFirst_thenCuratorSelector_oneLeader_andCuratorLeadsOnceWeStepDown() throws Exception {
    LeaderElection ours = ours("ours", LeaderLayout.LEADER_SELECTOR);
    Leadership leadership = ours.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    Selector curator = curatorSelector("curator");
    await().until(() -> curator.selector.getParticipants().size() == 2);

    assertThat(curator.leading.tryAcquire(500, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(curator.selector.getLeader().getId()).isEqualTo("ours");

    leadership.close();

    assertThat(curator.leading.tryAcquire(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ours.isLeader()).isFalse();
    CountDownLatch oursAgain = new CountDownLatch(1);
    ours.leadershipAsync().thenRun(oursAgain::countDown);
    curator.giveUp.release();
    assertThat(oursAgain.await(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void selectorLayout_withTheEmptyId_leavesTheNodeDataToTheClient_asCuratorsSelectorDoes()
      throws Exception {
    CuratorFramework client = zk.newClient();
    LeaderElection ours =
        LeaderElection.builder(client, zk.path("leader"))
            .layout(LeaderLayout.LEADER_SELECTOR)
            .build();
    toClose.add(ours);
    ours.start();
    assertThat(ours.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    Selector curator = new Selector(zk.newClient(), zk.path("leader"), "");
    curator.selector.setId("");
    curator.selector.start();
    toClose.add(curator.selector);
    await().until(() -> ours.participants().size() == 2);

    List<String> children = client.getChildren().forPath(zk.path("leader"));
    assertThat(children).allMatch(n -> n.matches("_c_[0-9a-f-]{36}-lock-\\d{10}"));
    String defaultData =
        new String(CuratorFrameworkFactory.builder().getDefaultData(), StandardCharsets.UTF_8);
    assertThat(ours.participants())
        .extracting(Participant::id)
        .containsExactly(defaultData, defaultData);
    assertThat(curator.selector.getParticipants())
        .extracting(p -> p.getId())
        .containsExactly(defaultData, defaultData);
  }
}

package io.lockstep.recipes.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The basics of an election: one leader, handing over, epochs, listeners, loss and re-election. */
@Timeout(60)
class LeaderElectionTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private final List<LeaderElection> elections = new ArrayList<>();

  @AfterEach
  void closeElections() {
    elections.forEach(LeaderElection::close);
  }

  private LeaderElection started(String id) {
    return started(zk.newClient(), id, LeaderLayout.LEADER_LATCH);
  }

  private LeaderElection started(CuratorFramework client, String id, LeaderLayout layout) {
    LeaderElection election =
        LeaderElection.builder(client, zk.path("election"))
            .participantId(id)
            .layout(layout)
            .build();
    elections.add(election);
    election.start();
    return election;
  }

  private static LeaderElection theLeader(List<LeaderElection> among) {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> among.stream().filter(LeaderElection::isLeader).count() == 1);
    return among.stream().filter(LeaderElection::isLeader).findFirst().orElseThrow();
  }

  @Test
  void amongFourParticipants_exactlyOneLeads_andParticipantsListItFirst() throws Exception {
    for (LeaderLayout layout : LeaderLayout.values()) {
      List<LeaderElection> four = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        four.add(started(zk.newClient(), layout + "-" + i, layout));
      }
      LeaderElection leader = theLeader(four);
      await().until(() -> leader.participants().size() == 4);

      List<Participant> participants = four.get(3).participants();
      assertThat(participants).filteredOn(Participant::leader).hasSize(1);
      assertThat(participants.get(0).leader()).isTrue();
      assertThat(participants)
          .extracting(Participant::id)
          .containsExactlyInAnyOrder(layout + "-0", layout + "-1", layout + "-2", layout + "-3");
      assertThat(leader.leadership()).isPresent();
      assertThat(four).filteredOn(e -> e.leadership().isPresent()).hasSize(1);
      assertThat(leader.toString()).contains(zk.path("election"));
      four.forEach(LeaderElection::close);
    }
  }

  @Test
  void theTryForm_tryHold_leadsWhenFree_andIsEmptyWhileAnotherLeads() throws Exception {
    LeaderElection a = started("a");
    Leadership first = a.tryHold(Duration.ofSeconds(10)).orElseThrow();
    LeaderElection b = started("b");
    await().until(() -> a.participants().size() == 2);

    assertThat(b.tryHold(Duration.ofMillis(200))).isEmpty();
    assertThat(b.tryHold(Duration.ZERO)).isEmpty();

    long firstToken = first.fencingToken();
    first.close();
    Leadership second = b.hold();
    assertThat(second.state()).isEqualTo(LockState.HELD);
    assertThat(second.fencingToken()).isGreaterThan(firstToken);
    second.close();
  }

  @Test
  void closingTheLeadership_passesItOn_andTheOldLeaderQueuesAgain() throws Exception {
    LeaderElection a = started("a");
    Leadership first = a.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    LeaderElection b = started("b");
    await().until(() -> a.participants().size() == 2);

    first.close();

    Leadership second = b.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    assertThat(first.state()).isEqualTo(LockState.RELEASED);
    assertThatThrownBy(first::checkHeld).isInstanceOf(IllegalStateException.class);
    await().until(() -> b.participants().size() == 2);
    assertThat(b.participants()).extracting(Participant::id).containsExactly("b", "a");
    assertThat(a.isLeader()).isFalse();

    second.close();

    assertThat(a.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    assertThatThrownBy(second::fencingToken).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void nodePath_namesTheParticipantsNode_inTheQueueAndLeading_andIsEmptyBeforeStartAndAfterClose()
      throws Exception {
    String path = zk.path("election");
    LeaderElection a = started("a");
    assertThat(a.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    LeaderElection b = LeaderElection.builder(zk.newClient(), path).participantId("b").build();
    elections.add(b);
    assertThat(b.nodePath()).as("before start").isEmpty();

    b.start();
    await().until(() -> b.nodePath().isPresent());
    String node = b.nodePath().orElseThrow();
    assertThat(ZooKeeperExtension.childrenOrNone(zk.newClient(), path))
        .map(child -> path + "/" + child)
        .containsExactlyInAnyOrder(a.nodePath().orElseThrow(), node);
    a.close();
    assertThat(b.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    assertThat(b.nodePath()).as("the leader's node: the one it queued with").contains(node);

    b.close();
    assertThat(b.nodePath()).as("after close").isEmpty();
  }

  @Test
  void closingTheLeadersElection_passesLeadershipOn_andItsNodeIsGoneOnReturn() throws Exception {
    LeaderElection a = started("a");
    assertThat(a.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    LeaderElection b = started("b");
    LeaderElection c = started("c");
    await().until(() -> a.participants().size() == 3);

    a.close();

    assertThat(b.participants()).extracting(Participant::id).containsExactly("b", "c");
    assertThat(b.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    c.close(); // a waiter leaves: gone on return too
    assertThat(b.participants()).extracting(Participant::id).containsExactly("b");
    b.close();
    // the election's directory is a container: the server may reap it once the last one left
    assertThat(ZooKeeperExtension.childrenOrNone(zk.newClient(), zk.path("election"))).isEmpty();
    zk.assertNothingLeft();
  }

  @Test
  void epochs_increaseStrictly_fromLeaderToLeader() throws Exception {
    List<LeaderElection> three = new ArrayList<>();
    for (String id : List.of("a", "b", "c")) {
      three.add(started(id));
      await().until(() -> three.get(0).participants().size() == three.size());
    }
    List<Long> epochs = new ArrayList<>();
    List<String> leaders = new ArrayList<>();
    for (int i = 0; i < 9; i++) {
      LeaderElection leader = theLeader(three);
      Leadership leadership = leader.leadership().orElseThrow();
      epochs.add(leadership.fencingToken());
      leaders.add(leader.participants().get(0).id());
      leadership.close();
      await().until(() -> three.stream().anyMatch(LeaderElection::isLeader));
    }

    assertThat(epochs).isSorted().doesNotHaveDuplicates();
    assertThat(leaders).containsExactly("a", "b", "c", "a", "b", "c", "a", "b", "c");
  }

  @Test
  void listeners_hearElectedThenLost_inOrder_neverOnZooKeepersEventThread() throws Exception {
    Recorder heard = new Recorder();
    LeaderElection a =
        LeaderElection.builder(zk.newClient(), zk.path("election")).participantId("a").build();
    elections.add(a);
    a.addListener(heard);
    a.start();
    Leadership first = a.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    LeaderElection b = started("b");
    await().until(() -> b.participants().size() == 2);

    first.close();
    b.awaitLeadership(Duration.ofSeconds(10)).orElseThrow().close();
    Leadership third = a.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    long thirdEpoch = third.fencingToken();
    await().until(() -> heard.events.size() == 3);
    a.close();
    await().until(() -> heard.events.size() == 4);

    assertThat(heard.kinds()).containsExactly("elected", "lost", "elected", "lost");
    assertThat(heard.events.get(0).epoch()).isEqualTo(heard.events.get(1).epoch());
    assertThat(heard.events.get(2).epoch()).isEqualTo(thirdEpoch);
    assertThat(heard.events)
        .extracting(Recorder.Event::thread)
        .allMatch(name -> name.startsWith("lockstep-"), "a Lockstep thread")
        .noneMatch(name -> name.endsWith("EventThread"));
  }

  @Test
  void aListenerRemoved_hearsNothingMore() throws Exception {
    Recorder removed = new Recorder();
    Recorder kept = new Recorder();
    LeaderElection a =
        LeaderElection.builder(zk.newClient(), zk.path("election")).participantId("a").build();
    elections.add(a);
    a.addListener(removed);
    a.addListener(kept);
    a.removeListener(removed);
    a.start();
    assertThat(a.awaitLeadership(Duration.ofSeconds(10))).isPresent();

    await().until(() -> kept.heard("elected"));
    assertThat(removed.events).isEmpty();
  }

  @Test
  void leadershipAsync_completesWithTheNextLeadership_offZooKeepersThread() throws Exception {
    LeaderElection a = started("a");
    Leadership first = a.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    LeaderElection b = started("b");
    CompletableFuture<String> thread =
        b.leadershipAsync().thenApply(l -> Thread.currentThread().getName()).toCompletableFuture();
    assertThat(a.leadershipAsync().toCompletableFuture().getNow(null)).isSameAs(first);
    assertThat(thread).isNotDone();

    first.close();

    assertThat(thread.get(10, TimeUnit.SECONDS)).startsWith("lockstep-");
    assertThat(b.isLeader()).isTrue();
  }

  @Test
  void awaitLeadership_returnsOnlyOnceTheListenersHeardElected_evenWhenTheTermIsAlreadyThere()
      throws Exception {
    CountDownLatch inListener = new CountDownLatch(1);
    CountDownLatch letGo = new CountDownLatch(1);
    LeaderElection a =
        LeaderElection.builder(zk.newClient(), zk.path("election")).participantId("a").build();
    elections.add(a);
    a.addListener(
        new LeadershipListener() {
          @Override
          public void elected(Leadership leadership) {
            inListener.countDown();
            try {
              letGo.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        });
    a.start();
    assertThat(inListener.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(a.isLeader()).as("the term is there").isTrue();

    assertThat(a.awaitLeadership(Duration.ofMillis(300)))
        .as("not before the listener has heard it")
        .isEmpty();
    letGo.countDown();
    assertThat(a.awaitLeadership(Duration.ofSeconds(10))).isPresent();
  }

  @Test
  void afterSessionExpiry_theLeaderHearsLost_anotherIsElected_andItQueuesAgainByItself()
      throws Exception {
    zk.skipLeakCheck();
    CuratorFramework client = zk.newClient();
    Recorder heard = new Recorder();
    LeaderElection a =
        LeaderElection.builder(client, zk.path("election")).participantId("a").build();
    elections.add(a);
    a.addListener(heard);
    a.start();
    Leadership first = a.awaitLeadership(Duration.ofSeconds(10)).orElseThrow();
    long epoch = first.fencingToken();
    LeaderElection b = started("b");
    await().until(() -> b.participants().size() == 2);

    Sessions.expire(client, zk.server().getConnectString());

    Leadership second = b.awaitLeadership(Duration.ofSeconds(20)).orElseThrow();
    await().atMost(Duration.ofSeconds(20)).until(() -> heard.heard("lost"));
    assertThat(first.state()).isEqualTo(LockState.LOST);
    assertThatThrownBy(first::checkHeld).isInstanceOf(LockOwnershipLostException.class);
    assertThatThrownBy(first::fencingToken).isInstanceOf(LockOwnershipLostException.class);
    assertThat(second.fencingToken()).isGreaterThan(epoch);
    await().atMost(Duration.ofSeconds(20)).until(() -> b.participants().size() == 2);
    assertThat(b.participants()).extracting(Participant::id).containsExactly("b", "a");

    long secondEpoch = second.fencingToken();
    second.close();

    Leadership again = a.awaitLeadership(Duration.ofSeconds(20)).orElseThrow();
    assertThat(again.fencingToken()).isGreaterThan(secondEpoch);
    // the connection drops as the session ends: at risk first, never restored
    assertThat(heard.kinds()).containsSubsequence("elected", "lost", "elected");
    assertThat(heard.kinds()).doesNotContain("restored");
    first.close(); // a lost leadership closes quietly
    assertThat(a.isLeader()).isTrue();
  }

  @Test
  void awaitLeadership_whileAnotherLeads_returnsEmptyWithinItsBudget() throws Exception {
    assertThat(started("a").awaitLeadership(Duration.ofSeconds(10))).isPresent();
    LeaderElection b = started("b");

    long start = System.nanoTime();
    Optional<Leadership> none = b.awaitLeadership(Duration.ofMillis(300));
    long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(none).isEmpty();
    assertThat(tookMillis).isBetween(250L, 2_000L);
    assertThat(b.awaitLeadership(Duration.ZERO)).isEmpty();
  }

  @Test
  void awaitLeadership_returnsEmpty_whenTheElectionClosesMeanwhile() throws Exception {
    assertThat(started("a").awaitLeadership(Duration.ofSeconds(10))).isPresent();
    LeaderElection b = started("b");
    CompletableFuture<Leadership> next = b.leadershipAsync().toCompletableFuture();

    b.close();

    assertThat(next).failsWithin(Duration.ofSeconds(5));
    assertThatThrownBy(() -> b.awaitLeadership(Duration.ofSeconds(1)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
  }
}

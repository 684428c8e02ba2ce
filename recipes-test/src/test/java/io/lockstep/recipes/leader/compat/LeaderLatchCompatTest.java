package io.lockstep.recipes.leader.compat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.TcpProxy;
import java.io.EOFException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The compat {@link LeaderLatch} behaves as Curator's where users rely on it, and a fleet of both
 * on one path elects one leader, handing leadership over both ways.
 */
@Timeout(60)
class LeaderLatchCompatTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void aMixedFleet_electsOneLeader_andHandsOverBothWays() throws Exception {
    String path = zk.path("latch");
    org.apache.curator.framework.recipes.leader.LeaderLatch curator =
        new org.apache.curator.framework.recipes.leader.LeaderLatch(
            zk.newClient(), path, "curator");
    curator.start();
    assertThat(curator.await(10, TimeUnit.SECONDS)).isTrue();
    LeaderLatch ours = new LeaderLatch(zk.newClient(), path, "ours");
    ours.start();
    await().until(() -> ours.getParticipants().size() == 2);

    assertThat(ours.await(200, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(ours.hasLeadership()).isFalse();
    assertThat(ours.getLeader().getId()).isEqualTo("curator");
    assertThat(ours.getParticipants())
        .extracting(Participant::getId, Participant::isLeader)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("curator", true),
            org.assertj.core.groups.Tuple.tuple("ours", false));
    assertThat(curator.getLeader().getId()).isEqualTo("curator");

    curator.close(); // Curator's leader goes: ours leads

    assertThat(ours.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ours.hasLeadership()).isTrue();
    long firstEpoch = ours.epoch();
    org.apache.curator.framework.recipes.leader.LeaderLatch next =
        new org.apache.curator.framework.recipes.leader.LeaderLatch(zk.newClient(), path, "next");
    next.start();
    await().until(() -> next.getParticipants().size() == 2);
    assertThat(next.getLeader().getId()).isEqualTo("ours");
    assertThat(next.hasLeadership()).isFalse();

    ours.close(); // ours goes: Curator's next leads

    assertThat(next.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ours.getState()).isEqualTo(LeaderLatch.State.CLOSED);
    assertThat(firstEpoch).isPositive();
    next.close();
  }

  @Test
  void anExpiredSession_passesLeadershipToCuratorsLatch_andOursQueuesAgain() throws Exception {
    String path = zk.path("latch");
    org.apache.curator.framework.CuratorFramework client = zk.newClient();
    LeaderLatch ours = new LeaderLatch(client, path, "ours");
    List<String> heard = new CopyOnWriteArrayList<>();
    ours.addListener(new LeaderLatchCuratorParityTest.Recording(heard));
    ours.start();
    assertThat(ours.await(10, TimeUnit.SECONDS)).isTrue();
    org.apache.curator.framework.recipes.leader.LeaderLatch curator =
        new org.apache.curator.framework.recipes.leader.LeaderLatch(
            zk.newClient(), path, "curator");
    curator.start();
    await().until(() -> ours.getParticipants().size() == 2);

    client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();

    assertThat(curator.await(20, TimeUnit.SECONDS)).isTrue();
    await().until(() -> heard.contains("notLeader"));
    assertThat(ours.hasLeadership()).isFalse();
    await().until(() -> ours.getParticipants().size() == 2); // ours is back in the queue
    assertThat(ours.getLeader().getId()).isEqualTo("curator");
    assertThat(ours.hasLeadership()).isFalse();
    curator.close();
    assertThat(ours.await(20, TimeUnit.SECONDS)).isTrue();
    ours.close();
  }

  /**
   * Curator's latch leads and ours waits; the server restarts within the session timeout. Curator's
   * latch drops its leadership at SUSPENDED and queues again at RECONNECTED (a new node, behind
   * ours), so ours may take over: at no sample do both believe they lead, and one leads after.
   */
  @Test
  void aMixedFleet_throughAServerRestart_neverHasTwoLeaders_andElectsOneAfter() throws Exception {
    String path = zk.path("latch");
    org.apache.curator.framework.recipes.leader.LeaderLatch curator =
        new org.apache.curator.framework.recipes.leader.LeaderLatch(
            zk.newClient(), path, "curator");
    curator.start();
    assertThat(curator.await(10, TimeUnit.SECONDS)).isTrue();
    LeaderLatch ours = new LeaderLatch(zk.newClient(), path, "ours");
    ours.start();
    await().until(() -> ours.getParticipants().size() == 2);
    AtomicInteger samples = new AtomicInteger();
    AtomicInteger bothLeading = new AtomicInteger();
    AtomicBoolean sampling = new AtomicBoolean(true);
    Thread sampler =
        new Thread(
            () -> {
              while (sampling.get()) {
                samples.incrementAndGet();
                if (curator.hasLeadership() && ours.hasLeadership()) {
                  bothLeading.incrementAndGet();
                }
                Thread.onSpinWait();
              }
            },
            "leader-sampler");
    sampler.start();

    zk.server().restart();

    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> curator.hasLeadership() ^ ours.hasLeadership());
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> ours.getParticipants().size() == 2 && curator.getParticipants().size() == 2);
    String leader = curator.hasLeadership() ? "curator" : "ours";
    assertThat(ours.getLeader().getId()).isEqualTo(leader);
    assertThat(curator.getLeader().getId()).isEqualTo(leader);
    sampling.set(false);
    sampler.join();
    assertThat(samples.get()).isPositive();
    assertThat(bothLeading.get()).as("samples at which both latches led").isZero();
    curator.close();
    ours.close();
  }

  /** As Curator's {@code testNoServerAtStart}: a latch started while the server is down leads. */
  @Test
  void startedWhileTheServerIsDown_leadsOnceItIsBack() throws Exception {
    LeaderLatch ours = new LeaderLatch(zk.newClient(), zk.path("latch"), "ours");
    zk.server().stop();
    try {
      ours.start();
      assertThat(ours.await(300, TimeUnit.MILLISECONDS)).isFalse();
    } finally {
      zk.server().restart();
    }

    assertThat(ours.await(30, TimeUnit.SECONDS)).isTrue();
    ours.close();
  }

  /**
   * As Curator's {@code testProperCloseWithoutConnectionEstablished}: a close while the server is
   * down returns, and the latch's node is gone once the server is back.
   */
  @Test
  void closedWhileTheServerIsDown_returns_andItsNodeGoesWhenTheServerIsBack() throws Exception {
    String path = zk.path("latch");
    LeaderLatch ours = new LeaderLatch(zk.newClient(), path, "ours");
    ours.start();
    assertThat(ours.await(10, TimeUnit.SECONDS)).isTrue();
    zk.server().stop();
    try {
      CompletableFuture<Void> closing =
          CompletableFuture.runAsync(
              () -> {
                try {
                  ours.close();
                } catch (java.io.IOException e) {
                  throw new java.io.UncheckedIOException(e);
                }
              });
      closing.get(30, TimeUnit.SECONDS);
      assertThat(ours.hasLeadership()).isFalse();
    } finally {
      zk.server().restart();
    }

    var admin = zk.newClient();
    await()
        .atMost(Duration.ofSeconds(40))
        .until(() -> ZooKeeperExtension.childrenOrNone(admin, path).isEmpty());
  }

  @Test
  void listeners_hearIsLeader_andNotLeaderAtACloseThatNotifies() throws Exception {
    LeaderLatch latch =
        new LeaderLatch(zk.newClient(), zk.path("latch"), "a", LeaderLatch.CloseMode.NOTIFY_LEADER);
    List<String> heard = new CopyOnWriteArrayList<>();
    List<String> threads = new CopyOnWriteArrayList<>();
    latch.addListener(
        new LeaderLatchListener() {
          @Override
          public void isLeader() {
            heard.add("isLeader");
            threads.add(Thread.currentThread().getName());
          }

          @Override
          public void notLeader() {
            heard.add("notLeader");
          }
        });

    latch.start();
    latch.await();
    await().until(() -> heard.contains("isLeader"));
    latch.close();

    await().until(() -> heard.size() == 2);
    assertThat(heard).containsExactly("isLeader", "notLeader");
    assertThat(threads).noneMatch(name -> name.contains("EventThread"));
  }

  @Test
  void aSilentClose_tellsListenersNothing() throws Exception {
    LeaderLatch latch = new LeaderLatch(zk.newClient(), zk.path("latch"), "a");
    List<String> heard = new CopyOnWriteArrayList<>();
    CompletableFuture<Void> leading = new CompletableFuture<>();
    latch.addListener(
        new LeaderLatchListener() {
          @Override
          public void isLeader() {
            heard.add("isLeader");
            leading.complete(null);
          }

          @Override
          public void notLeader() {
            heard.add("notLeader");
          }
        },
        Runnable::run);
    latch.start();
    leading.get(10, TimeUnit.SECONDS);

    latch.close();
    LeaderLatch other = new LeaderLatch(zk.newClient(), zk.path("latch"), "b");
    other.start();
    other.await(); // the closed latch's node is gone: the next one leads

    assertThat(heard).containsExactly("isLeader");
    other.close();
  }

  @Test
  void await_endsWithEofException_whenTheLatchClosesMeanwhile() throws Exception {
    String path = zk.path("latch");
    LeaderLatch leader = new LeaderLatch(zk.newClient(), path, "leader");
    leader.start();
    leader.await();
    LeaderLatch waiter = new LeaderLatch(zk.newClient(), path, "waiter");
    waiter.start();
    CompletableFuture<Throwable> ended = new CompletableFuture<>();
    Thread waiting =
        new Thread(
            () -> {
              try {
                waiter.await();
                ended.complete(null);
              } catch (Throwable t) {
                ended.complete(t);
              }
            });
    waiting.start();
    await().until(() -> waiter.getParticipants().size() == 2);

    waiter.close();

    assertThat(ended.get(10, TimeUnit.SECONDS)).isInstanceOf(EOFException.class);
    assertThat(leader.hasLeadership()).isTrue();
    assertThat(leader.getParticipants()).extracting(Participant::getId).containsExactly("leader");
    leader.close();
  }

  @Test
  void itsLife_latentStartedClosed_asCuratorsIs() throws Exception {
    LeaderLatch latch = new LeaderLatch(zk.newClient(), zk.path("latch"));
    assertThat(latch.getState()).isEqualTo(LeaderLatch.State.LATENT);
    assertThat(latch.getId()).isEmpty();
    assertThatThrownBy(latch::close).isInstanceOf(IllegalStateException.class);

    latch.start();
    assertThat(latch.getState()).isEqualTo(LeaderLatch.State.STARTED);
    assertThatThrownBy(latch::start).isInstanceOf(IllegalStateException.class);
    assertThat(latch.await(Duration.ofSeconds(10))).isTrue();
    assertThat(latch.leadership()).isPresent();

    latch.close();
    assertThat(latch.getState()).isEqualTo(LeaderLatch.State.CLOSED);
    assertThat(latch.hasLeadership()).isFalse();
    assertThat(latch.leadership()).isEmpty();
    assertThatThrownBy(latch::epoch).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(latch::close)
        .as("closed again: Curator's throws too")
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("Already closed or has not been started");
  }

  @Test
  void aListenerAddedWhileLeading_hearsNotLeader_whenTheLeadershipEnds() throws Exception {
    LeaderLatch latch = new LeaderLatch(zk.newClient(), zk.path("latch"), "a");
    latch.start();
    latch.await();
    AtomicBoolean notLeader = new AtomicBoolean();
    latch.addListener(
        new LeaderLatchListener() {
          @Override
          public void isLeader() {}

          @Override
          public void notLeader() {
            notLeader.set(true);
          }
        });

    latch.close(LeaderLatch.CloseMode.NOTIFY_LEADER);

    await().atMost(Duration.ofSeconds(10)).untilTrue(notLeader);
  }

  @Test
  void aListenerThatThrowsAnError_doesNotSilenceTheListenersAfterIt() throws Exception {
    LeaderLatch latch = new LeaderLatch(zk.newClient(), zk.path("latch"), "a");
    AtomicBoolean told = new AtomicBoolean();
    latch.addListener(
        new LeaderLatchListener() {
          @Override
          public void isLeader() {
            throw new AssertionError("a listener's own assertion");
          }

          @Override
          public void notLeader() {}
        });
    latch.addListener(
        new LeaderLatchListener() {
          @Override
          public void isLeader() {
            told.set(true);
          }

          @Override
          public void notLeader() {}
        });

    latch.start();

    await().atMost(Duration.ofSeconds(10)).untilTrue(told);
    latch.close();
  }

  @Test
  void aClosedLatch_stillReadsTheLeaderAndTheParticipants() throws Exception {
    String path = zk.path("latch");
    LeaderLatch leader = new LeaderLatch(zk.newClient(), path, "a");
    leader.start();
    leader.await();
    LeaderLatch closed = new LeaderLatch(zk.newClient(), path, "b");
    closed.start();
    await().until(() -> closed.getParticipants().size() == 2);
    closed.close();

    assertThat(closed.getLeader().getId()).isEqualTo("a");
    assertThat(closed.getParticipants()).extracting(Participant::getId).containsExactly("a");
    leader.close();
  }

  @Test
  void await_whileTheLeadersConnectionIsSuspended_waitsUntilItLeadsAgain() throws Exception {
    TcpProxy proxy = zk.proxy();
    CuratorFramework client =
        zk.newClient(
            b ->
                b.connectString(proxy.connectString())
                    .sessionTimeoutMs(20_000)
                    .connectionTimeoutMs(2_000)
                    .retryPolicy(new RetryNTimes(3, 100)));
    LeaderLatch latch = new LeaderLatch(client, zk.path("latch"), "a");
    latch.start();
    latch.await();
    proxy.cut();
    await().atMost(Duration.ofSeconds(10)).until(() -> !latch.hasLeadership());

    CompletableFuture.delayedExecutor(2, TimeUnit.SECONDS).execute(proxy::heal);
    boolean leads = latch.await(20, TimeUnit.SECONDS);

    assertThat(leads).as("await returned once it leads again, not at once").isTrue();
    assertThat(latch.hasLeadership()).isTrue();
    latch.close();
  }

  @Test
  void await_inIsLeader_returnsThatItLeads() throws Exception {
    LeaderLatch latch = new LeaderLatch(zk.newClient(), zk.path("latch"), "a");
    CompletableFuture<Boolean> awaited = new CompletableFuture<>();
    latch.addListener(
        new LeaderLatchListener() {
          @Override
          public void isLeader() {
            try {
              awaited.complete(latch.await(5, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
              awaited.completeExceptionally(e);
            }
          }

          @Override
          public void notLeader() {}
        });

    latch.start();

    assertThat(awaited.get(10, TimeUnit.SECONDS)).isTrue();
    latch.close();
  }
}

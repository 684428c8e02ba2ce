package io.lockstep.recipes.leader.compat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.leader.Leadership;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.TcpProxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The compat {@link LeaderSelector} behaves as Curator's where users rely on it (takeLeadership on
 * the selector's thread, leadership ending when it returns, autoRequeue and requeue, the adapter's
 * interrupt on a lost connection, close interrupting the leader), and a fleet of both on one path
 * elects one leader at a time, handing over both ways.
 */
@Timeout(90)
class LeaderSelectorCompatTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Leads until told to step down or interrupted; records who led, one at a time. */
  private static class Leader extends LeaderSelectorListenerAdapter {
    final String name;
    final BlockingQueue<String> led;
    final AtomicInteger leading;
    final CountDownLatch interrupted = new CountDownLatch(1);
    volatile CountDownLatch stepDown = new CountDownLatch(1);
    final List<String> threads = new CopyOnWriteArrayList<>();

    Leader(String name, BlockingQueue<String> led, AtomicInteger leading) {
      this.name = name;
      this.led = led;
      this.leading = leading;
    }

    @Override
    public void takeLeadership(CuratorFramework client) throws Exception {
      int now = leading.incrementAndGet();
      threads.add(Thread.currentThread().getName());
      led.add(name + (now == 1 ? "" : " (two leaders!)"));
      try {
        stepDown.await();
      } catch (InterruptedException e) {
        interrupted.countDown();
        throw e;
      } finally {
        leading.decrementAndGet();
        stepDown = new CountDownLatch(1);
      }
    }
  }

  private final BlockingQueue<String> led = new LinkedBlockingQueue<>();
  private final AtomicInteger leading = new AtomicInteger();

  /** Curator's selector and ours on one path, both requeuing, Curator's leading. */
  private record MixedFleet(
      Leader curatorSide,
      Leader ourSide,
      org.apache.curator.framework.recipes.leader.LeaderSelector curator,
      LeaderSelector ours) {}

  private MixedFleet mixedFleet() throws InterruptedException {
    String path = zk.path("leader");
    Leader curatorSide = new Leader("curator", led, leading);
    Leader ourSide = new Leader("ours", led, leading);
    org.apache.curator.framework.recipes.leader.LeaderSelector curator =
        new org.apache.curator.framework.recipes.leader.LeaderSelector(
            zk.newClient(), path, curatorSide);
    curator.setId("curator");
    curator.autoRequeue();
    curator.start();
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("curator");
    LeaderSelector ours = new LeaderSelector(zk.newClient(), path, ourSide);
    ours.setId("ours");
    ours.autoRequeue();
    ours.start();
    await().until(() -> ours.getParticipants().size() == 2);
    return new MixedFleet(curatorSide, ourSide, curator, ours);
  }

  @Test
  void aMixedFleet_leadsOneAtATime_andHandsOverBothWays() throws Exception {
    MixedFleet fleet = mixedFleet();
    Leader curatorSide = fleet.curatorSide();
    Leader ourSide = fleet.ourSide();
    org.apache.curator.framework.recipes.leader.LeaderSelector curator = fleet.curator();
    LeaderSelector ours = fleet.ours();
    assertThat(ours.getLeader().getId()).isEqualTo("curator");
    assertThat(ours.hasLeadership()).isFalse();

    curatorSide.stepDown.countDown(); // Curator's leader returns: ours leads

    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("ours");
    assertThat(ours.hasLeadership()).isTrue();
    assertThat(ours.epoch()).isPositive();
    assertThat(ourSide.threads).allMatch(name -> name.startsWith("LeaderSelector-"));
    assertThat(curator.getLeader().getId()).isEqualTo("ours");

    ourSide.stepDown.countDown(); // ours returns: Curator's (requeued) leads, then ours again

    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("curator");
    curatorSide.stepDown.countDown();
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("ours");

    ours.close();
    assertThat(ourSide.interrupted.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("curator");
    curator.close();
    assertThat(led).isEmpty();
  }

  /**
   * A server restart within the session timeout, with Curator's selector leading and ours queued:
   * the adapter interrupts Curator's leader at SUSPENDED, it steps down and queues again; one of
   * them leads after, and never two at once (the {@code leading} count the leaders keep).
   */
  @Test
  void aMixedFleet_throughAServerRestart_neverHasTwoLeaders_andOneLeadsAfter() throws Exception {
    MixedFleet fleet = mixedFleet();
    Leader curatorSide = fleet.curatorSide();
    org.apache.curator.framework.recipes.leader.LeaderSelector curator = fleet.curator();
    LeaderSelector ours = fleet.ours();

    zk.server().restart();

    assertThat(curatorSide.interrupted.await(20, TimeUnit.SECONDS)).isTrue();
    String next = led.poll(30, TimeUnit.SECONDS);
    assertThat(next).isIn("curator", "ours");
    await().atMost(Duration.ofSeconds(30)).until(() -> leading.get() == 1);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> ours.getParticipants().size() == 2 && curator.getParticipants().size() == 2);
    assertThat(ours.getLeader().getId()).isEqualTo(next);
    assertThat(curator.getLeader().getId()).isEqualTo(next);
    assertThat(led).noneMatch(name -> name.contains("two leaders"));
    ours.close();
    curator.close();
  }

  @Test
  void withoutAutoRequeue_itLeadsOnce_untilRequeued() throws Exception {
    Leader side = new Leader("ours", led, leading);
    LeaderSelector ours = new LeaderSelector(zk.newClient(), zk.path("leader"), side);
    ours.start();
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("ours");
    assertThat(ours.requeue()).isFalse(); // leading: queued already

    side.stepDown.countDown();
    await().until(() -> ours.getParticipants().isEmpty());
    assertThat(ours.hasLeadership()).isFalse();
    assertThat(led.poll(300, TimeUnit.MILLISECONDS)).isNull();

    assertThat(ours.requeue()).isTrue();
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("ours");
    ours.interruptLeadership();
    assertThat(side.interrupted.await(10, TimeUnit.SECONDS)).isTrue();
    await().until(() -> !ours.hasLeadership());
    ours.close();
  }

  @Test
  void aLostSession_interruptsTheLeader_throughTheAdapter() throws Exception {
    String path = zk.path("leader");
    Leader side = new Leader("ours", led, leading);
    CuratorFramework client = zk.newClient();
    LeaderSelector ours = new LeaderSelector(client, path, side);
    ours.autoRequeue();
    ours.start();
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("ours");
    Leader otherSide = new Leader("curator", led, leading);
    org.apache.curator.framework.recipes.leader.LeaderSelector curator =
        new org.apache.curator.framework.recipes.leader.LeaderSelector(
            zk.newClient(), path, otherSide);
    curator.start();
    await().until(() -> ours.getParticipants().size() == 2);

    client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();

    assertThat(side.interrupted.await(20, TimeUnit.SECONDS)).isTrue();
    // After a lost session, Lockstep removes the old session's node at once (it cannot tell a
    // session the server expired from one only the client gave up), where Curator's selector
    // deletes its node when takeLeadership returns: Curator's leader may start while ours is
    // still returning from its interrupt (docs/migration.md; the epochs fence that interval).
    assertThat(led.poll(20, TimeUnit.SECONDS)).startsWith("curator");
    // Ours leads until its interrupted takeLeadership has returned (as Curator's, whose flag
    // drops after it returns), which may be just after Curator's leader started.
    await().untilAsserted(() -> assertThat(ours.hasLeadership()).isFalse());
    assertThat(ours.leadership()).isEmpty();
    otherSide.stepDown.countDown(); // the requeued selector leads again on its new session
    assertThat(led.poll(20, TimeUnit.SECONDS)).isEqualTo("ours");
    ours.close(); // its node is gone on return; Curator's left the queue when it stepped down

    assertThat(curator.getParticipants()).isEmpty();
    curator.close();
  }

  /**
   * Leads until interrupted, then takes as long to return as the test says: a leader still
   * returning when its selector is elected again on a new session.
   */
  private static final class SlowToReturn extends LeaderSelectorListenerAdapter {
    final BlockingQueue<String> led;
    final AtomicInteger leading;
    final CountDownLatch mayReturn = new CountDownLatch(1);
    final AtomicInteger calls = new AtomicInteger();

    SlowToReturn(BlockingQueue<String> led, AtomicInteger leading) {
      this.led = led;
      this.leading = leading;
    }

    @Override
    public void takeLeadership(CuratorFramework client) {
      int call = calls.incrementAndGet();
      led.add("ours-" + call + (leading.incrementAndGet() == 1 ? "" : " (two leaders!)"));
      try {
        new CountDownLatch(1).await();
      } catch (InterruptedException e) {
        boolean returned = false;
        while (call == 1 && !returned) {
          try {
            returned = mayReturn.await(1, TimeUnit.MINUTES);
          } catch (InterruptedException again) {
            // still returning
          }
        }
      } finally {
        leading.decrementAndGet();
      }
    }
  }

  /** Our participant, with its node, in the election again (on its new session). */
  private static boolean queuedAgain(LeaderSelector ours) {
    return ours.getParticipants().stream().anyMatch(p -> p.getId().equals("ours"));
  }

  @Test
  void electedAgainWhileTakeLeadershipReturns_withoutAutoRequeue_leadsNoMore() throws Exception {
    String path = zk.path("leader");
    SlowToReturn side = new SlowToReturn(led, leading);
    CuratorFramework client = zk.newClient();
    LeaderSelector ours = new LeaderSelector(client, path, side);
    ours.setId("ours");
    ours.start();
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("ours-1");

    client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
    await().atMost(Duration.ofSeconds(20)).until(() -> queuedAgain(ours));
    side.mayReturn.countDown(); // the first lead ends: without autoRequeue, the selector leaves
    await().atMost(Duration.ofSeconds(10)).until(() -> !queuedAgain(ours));
    Leader curatorSide = new Leader("curator", led, leading);
    org.apache.curator.framework.recipes.leader.LeaderSelector curator =
        new org.apache.curator.framework.recipes.leader.LeaderSelector(
            zk.newClient(), path, curatorSide);
    curator.start();

    assertThat(led.poll(10, TimeUnit.SECONDS)).as("Curator's, alone").isEqualTo("curator");
    curatorSide.stepDown.countDown();
    curator.close();
    ours.close();
    assertThat(side.calls)
        .as("takeLeadership, once: Curator's selector never runs it again")
        .hasValue(1);
  }

  @Test
  void electedAgainWhileTakeLeadershipReturns_withAutoRequeue_leadsAfterItReturned()
      throws Exception {
    String path = zk.path("leader");
    SlowToReturn side = new SlowToReturn(led, leading);
    CuratorFramework client = zk.newClient();
    ExecutorService pool = Executors.newCachedThreadPool();
    LeaderSelector ours = new LeaderSelector(client, path, pool, side);
    ours.setId("ours");
    ours.autoRequeue();
    ours.start();
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("ours-1");

    client.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
    await().atMost(Duration.ofSeconds(20)).until(() -> queuedAgain(ours));

    assertThat(led.poll(3, TimeUnit.SECONDS))
        .as("no second takeLeadership beside the first")
        .isNull();
    side.mayReturn.countDown();
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("ours-2");
    assertThat(ours.hasLeadership()).isTrue();
    ours.close();
    pool.shutdownNow();
  }

  /**
   * Curator 5.9.0's {@code interruptLeadership()} interrupts only a selector that has leadership: a
   * waiting one stays queued, in its place, and its {@code takeLeadership} later runs
   * uninterrupted. Ours alike.
   */
  @Test
  void interruptLeadership_whileWaiting_doesNothing_asCuratorsDoes() throws Exception {
    String path = zk.path("leader");
    Leader firstSide = new Leader("first", led, leading);
    LeaderSelector first = new LeaderSelector(zk.newClient(), path, firstSide);
    first.setId("first");
    first.start();
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("first");
    Leader curatorSide = new Leader("curator", led, leading);
    org.apache.curator.framework.recipes.leader.LeaderSelector curator =
        new org.apache.curator.framework.recipes.leader.LeaderSelector(
            zk.newClient(), path, curatorSide);
    curator.setId("curator");
    curator.start();
    await().until(() -> first.getParticipants().size() == 2);
    Leader ourSide = new Leader("ours", led, leading);
    LeaderSelector ours = new LeaderSelector(zk.newClient(), path, ourSide);
    ours.setId("ours");
    ours.start();
    await().until(() -> first.getParticipants().size() == 3);

    curator.interruptLeadership();
    ours.interruptLeadership();

    assertThat(first.getParticipants())
        .extracting(Participant::getId)
        .containsExactly("first", "curator", "ours");
    firstSide.stepDown.countDown();
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("curator");
    assertThat(curatorSide.interrupted.await(300, TimeUnit.MILLISECONDS)).isFalse();
    curatorSide.stepDown.countDown();
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("ours");
    assertThat(ourSide.interrupted.await(300, TimeUnit.MILLISECONDS)).isFalse();
    ourSide.stepDown.countDown();
    await().until(() -> first.getParticipants().isEmpty());
    first.close();
    curator.close();
    ours.close();
  }

  /** Records, for each takeLeadership, whether its thread was interrupted as it started. */
  private static final class RecordsItsStart extends LeaderSelectorListenerAdapter {
    final BlockingQueue<Boolean> startedInterrupted = new LinkedBlockingQueue<>();

    @Override
    public void takeLeadership(CuratorFramework client) throws InterruptedException {
      startedInterrupted.add(Thread.currentThread().isInterrupted());
      new CountDownLatch(1).await(); // leads until interrupted
    }
  }

  /**
   * Elected, its takeLeadership not started (the executor's one thread is busy): Curator 5.9.0's
   * {@code hasLeadership()} is true from the election on, and its {@code interruptLeadership()}
   * then interrupts the thread about to run takeLeadership, which starts interrupted. Ours alike;
   * the interrupt is that turn's only: the next (requeued) turn starts uninterrupted.
   */
  @Test
  void interruptLeadership_onceElected_beforeTakeLeadershipStarts_interruptsIt() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    CountDownLatch busy = new CountDownLatch(1);
    var unused = pool.submit(() -> busy.await(1, TimeUnit.MINUTES));
    RecordsItsStart side = new RecordsItsStart();
    LeaderSelector ours = new LeaderSelector(zk.newClient(), zk.path("leader"), pool, side);
    ours.autoRequeue();
    ours.start();
    await().until(ours::hasLeadership); // elected: its turn waits for the executor

    ours.interruptLeadership();
    busy.countDown();

    assertThat(side.startedInterrupted.poll(10, TimeUnit.SECONDS))
        .as("the elected turn's takeLeadership, interrupted as it starts")
        .isTrue();
    assertThat(side.startedInterrupted.poll(10, TimeUnit.SECONDS))
        .as("the next turn's, uninterrupted")
        .isFalse();
    assertThat(ours.hasLeadership()).isTrue();
    ours.close();
    pool.shutdownNow();
  }

  /** Curator's selector or ours, as one test drives either. */
  private record Selector(BooleanSupplier requeue, Runnable close) {}

  private Selector selector(
      String which, CuratorFramework client, String path, Leader side, boolean autoRequeue) {
    if (which.equals("ours")) {
      LeaderSelector ours = new LeaderSelector(client, path, side);
      ours.setId(side.name);
      if (autoRequeue) {
        ours.autoRequeue();
      }
      ours.start();
      return new Selector(ours::requeue, ours::close);
    }
    org.apache.curator.framework.recipes.leader.LeaderSelector curator =
        new org.apache.curator.framework.recipes.leader.LeaderSelector(client, path, side);
    curator.setId(side.name);
    if (autoRequeue) {
      curator.autoRequeue();
    }
    curator.start();
    return new Selector(curator::requeue, curator::close);
  }

  /**
   * Waiting (not leading), a selector whose connection is suspended hears the adapter's
   * CancelLeadershipException: Curator 5.9.0's cancels its whole election (it interrupts the
   * mutex's acquire, which deletes its node): it leaves the queue, and with autoRequeue queues
   * again at the back; without, {@code requeue()} queues it again. Ours alike, so a user whose
   * selector stops being a candidate on SUSPENDED still does, and no takeLeadership starts on a
   * leadership elected around the suspension, which the cancellation no longer reaches.
   */
  @ParameterizedTest(name = "{0}, autoRequeue {1}")
  @CsvSource({"curator, true", "curator, false", "ours, true", "ours, false"})
  void aWaitingSelector_whoseConnectionIsSuspended_leavesTheQueue_asCuratorsDoes(
      String which, boolean autoRequeue) throws Exception {
    String path = zk.path("leader");
    CuratorFramework reader = zk.newClient();
    Selector first = selector("curator", reader, path, new Leader("first", led, leading), false);
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("first");
    TcpProxy proxy = zk.proxy();
    CuratorFramework suspended =
        zk.newClient(
            b ->
                b.connectString(proxy.connectString())
                    .retryPolicy(new RetryNTimes(1_000, 100))); // through the cut
    List<ConnectionState> states = new CopyOnWriteArrayList<>();
    suspended.getConnectionStateListenable().addListener((c, state) -> states.add(state));
    Selector waiting =
        selector(which, suspended, path, new Leader(which, led, leading), autoRequeue);
    await().untilAsserted(() -> assertThat(ids(reader, path)).containsExactly("first", which));
    Selector last =
        selector("curator", zk.newClient(), path, new Leader("last", led, leading), false);
    await()
        .untilAsserted(() -> assertThat(ids(reader, path)).containsExactly("first", which, "last"));

    proxy.cut();
    await().until(() -> states.contains(ConnectionState.SUSPENDED));
    proxy.heal();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> states.contains(ConnectionState.RECONNECTED));

    if (autoRequeue) {
      await()
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(
              () -> assertThat(ids(reader, path)).containsExactly("first", "last", which));
    } else {
      await()
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(() -> assertThat(ids(reader, path)).containsExactly("first", "last"));
      assertThat(waiting.requeue().getAsBoolean()).isTrue();
      await()
          .untilAsserted(
              () -> assertThat(ids(reader, path)).containsExactly("first", "last", which));
    }
    assertThat(led).isEmpty();
    waiting.close().run();
    last.close().run();
    first.close().run();
    if (which.equals("curator")) {
      suspended.close(); // Curator's close may leave a waiting selector's node for a while
    }
  }

  /** The participants' ids on {@code path}, in queue order, as Curator's selector reads them. */
  private static List<String> ids(CuratorFramework client, String path) throws Exception {
    List<String> ids = new ArrayList<>();
    for (String node : new InterProcessMutex(client, path).getParticipantNodes()) {
      try {
        ids.add(new String(client.getData().forPath(node), StandardCharsets.UTF_8));
      } catch (KeeperException.NoNodeException gone) {
        // left meanwhile
      }
    }
    return ids;
  }

  /**
   * Curator 5.9.0's {@code start()} submits its task at once, so an executor already shut down
   * refuses it there, and the selector never queues; ours queued, was elected, could not run
   * takeLeadership and kept the leadership, so nobody led the path.
   */
  @Test
  void start_withAShutDownExecutor_throws_asCuratorsDoes() throws Exception {
    String path = zk.path("leader");
    ExecutorService pool = Executors.newSingleThreadExecutor();
    pool.shutdown();
    org.apache.curator.framework.recipes.leader.LeaderSelector curator =
        new org.apache.curator.framework.recipes.leader.LeaderSelector(
            zk.newClient(), path, pool, new Leader("curator", led, leading));
    LeaderSelector ours =
        new LeaderSelector(zk.newClient(), path, pool, new Leader("ours", led, leading));

    assertThatThrownBy(curator::start).isInstanceOf(RejectedExecutionException.class);
    assertThatThrownBy(ours::start).isInstanceOf(RejectedExecutionException.class);

    Leader later = new Leader("later", led, leading);
    LeaderSelector next = new LeaderSelector(zk.newClient(), path, later);
    next.start();
    assertThat(led.poll(10, TimeUnit.SECONDS))
        .as("a selector queued after them leads")
        .isEqualTo("later");
    next.close();
    ours.close();
    curator.close();
  }

  /**
   * The caller's executor shut down once the selector was queued: elected, it cannot run {@code
   * takeLeadership}, and keeping the leadership would leave the path without a working leader until
   * the selector closed. It leaves the election instead, and the next participant leads.
   */
  @Test
  void electedWithItsExecutorShutDown_leavesTheElection_andTheNextLeads() throws Exception {
    String path = zk.path("leader");
    Leader first = new Leader("first", led, leading);
    LeaderSelector leader = new LeaderSelector(zk.newClient(), path, first);
    leader.start();
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("first");
    ExecutorService pool = Executors.newSingleThreadExecutor();
    LeaderSelector ours =
        new LeaderSelector(zk.newClient(), path, pool, new Leader("ours", led, leading));
    ours.start();
    LeaderSelector last =
        new LeaderSelector(zk.newClient(), path, new Leader("last", led, leading));
    last.start();
    await().until(() -> ours.getParticipants().size() == 3);
    pool.shutdown();

    first.stepDown.countDown(); // without autoRequeue: first leaves, ours is elected

    assertThat(led.poll(10, TimeUnit.SECONDS)).as("the next participant leads").isEqualTo("last");
    assertThat(ours.hasLeadership()).isFalse();
    await().until(() -> last.getParticipants().size() == 1);
    last.close();
    ours.close();
    leader.close();
  }

  @Test
  void requeue_afterClose_throws_asCuratorsDoes() throws Exception {
    String path = zk.path("leader");
    org.apache.curator.framework.recipes.leader.LeaderSelector curator =
        new org.apache.curator.framework.recipes.leader.LeaderSelector(
            zk.newClient(), path, new Leader("curator", led, leading));
    LeaderSelector ours =
        new LeaderSelector(zk.newClient(), path, new Leader("ours", led, leading));
    curator.start();
    ours.start();
    curator.close();
    ours.close();

    assertThatThrownBy(curator::requeue)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("close() has already been called");
    assertThatThrownBy(ours::requeue)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("close() has already been called");
  }

  @Test
  void close_beforeStart_orAgain_throws_asCuratorsDoes() throws Exception {
    String path = zk.path("leader");
    org.apache.curator.framework.recipes.leader.LeaderSelector curator =
        new org.apache.curator.framework.recipes.leader.LeaderSelector(
            zk.newClient(), path, new Leader("curator", led, leading));
    LeaderSelector ours =
        new LeaderSelector(zk.newClient(), path, new Leader("ours", led, leading));

    assertThatThrownBy(curator::close)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("Already closed or has not been started");
    assertThatThrownBy(ours::close)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("Already closed or has not been started");

    ours.start(); // a refused close left it latent, as Curator's
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("ours");
    ours.close();
    assertThatThrownBy(ours::close)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("Already closed or has not been started");
  }

  /**
   * Without autoRequeue, a turn that ends leaves its election; a close meanwhile returns once that
   * node is gone, as it promises while ZooKeeper is reachable (the link is slow: a second each
   * way).
   */
  @Test
  void close_whileAFinishedTurnLeavesItsElection_returnsOnceItsNodeIsGone() throws Exception {
    String path = zk.path("leader");
    TcpProxy proxy = zk.proxy();
    CuratorFramework slow =
        zk.newClient(
            b ->
                b.connectString(proxy.connectString())
                    .sessionTimeoutMs(30_000)
                    .connectionTimeoutMs(10_000)
                    .retryPolicy(new RetryNTimes(3, 100)));
    AtomicReference<LeaderSelector> self = new AtomicReference<>();
    AtomicReference<Leadership> held = new AtomicReference<>();
    Leader side =
        new Leader("ours", led, leading) {
          @Override
          public void takeLeadership(CuratorFramework client) throws Exception {
            held.set(self.get().leadership().orElseThrow());
            super.takeLeadership(client);
          }
        };
    LeaderSelector ours = new LeaderSelector(slow, path, side);
    self.set(ours);
    ours.start();
    assertThat(led.poll(10, TimeUnit.SECONDS)).isEqualTo("ours");
    proxy.setLatency(1_000);

    side.stepDown.countDown(); // the turn ends: the selector leaves its election
    await().until(() -> held.get().state() == LockState.RELEASED);
    ours.close();

    assertThat(ZooKeeperExtension.childrenOrNone(zk.newClient(), path))
        .as("our node, when close returned")
        .isEmpty();
    proxy.setLatency(0);
  }
}

package io.lockstep.recipes.leader.compat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.TcpProxy;
import java.io.EOFException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.SessionConnectionStateErrorPolicy;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.function.ThrowingSupplier;

/**
 * Curator 5.9.0's {@code LeaderLatch} and the compat {@link LeaderLatch} side by side, method by
 * method, where a user who only changed the import would see a difference.
 */
@Timeout(60)
class LeaderLatchCuratorParityTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static org.apache.curator.framework.recipes.leader.LeaderLatch curatorLatch(
      CuratorFramework client, String path, String id) {
    return new org.apache.curator.framework.recipes.leader.LeaderLatch(client, path, id);
  }

  /** Every public method of Curator's latch, by name and parameter types, is one of ours. */
  @Test
  void everyPublicMethodOfCuratorsLatch_isOurs() {
    List<String> missing = new ArrayList<>();
    for (Method m :
        org.apache.curator.framework.recipes.leader.LeaderLatch.class.getDeclaredMethods()) {
      if (!Modifier.isPublic(m.getModifiers())) {
        continue;
      }
      Class<?>[] types =
          Arrays.stream(m.getParameterTypes())
              .map(LeaderLatchCuratorParityTest::ours)
              .toArray(Class[]::new);
      try {
        Method mine = LeaderLatch.class.getMethod(m.getName(), types);
        assertThat(Modifier.isPublic(mine.getModifiers())).as(m.getName()).isTrue();
      } catch (NoSuchMethodException e) {
        missing.add(m.getName() + Arrays.toString(types));
      }
    }
    assertThat(missing).as("Curator's public methods we lack").isEmpty();
  }

  private static Class<?> ours(Class<?> curators) {
    if (curators == org.apache.curator.framework.recipes.leader.LeaderLatch.CloseMode.class) {
      return LeaderLatch.CloseMode.class;
    }
    return curators;
  }

  /** A latch of ours on {@code path}, started, once it leads. */
  private static LeaderLatch leading(String path, String id) throws Exception {
    LeaderLatch leader = new LeaderLatch(zk.newClient(), path, id);
    leader.start();
    leader.await();
    return leader;
  }

  /** The calls of the node-path scenario, on Curator's latch or ours. */
  private record NodePaths(
      Executable start,
      Executable close,
      Supplier<String> ourPath,
      Supplier<String> lastPathIsLeader,
      ThrowingSupplier<Boolean> leadsSoon) {}

  /**
   * getOurPath() is null before start, the latch's node (a child of the latch path, as another
   * client reads it) once started, another node once the first was deleted by another client and
   * the latch made a new one, and null after close; getLastPathIsLeader() is null until the latch
   * leads, then its node, kept after close. Curator's latch and ours, on the same steps.
   */
  @Test
  void getOurPath_andGetLastPathIsLeader_followTheLatchsNode_asCuratorsDo() throws Throwable {
    String curatorPath = zk.path("curator");
    var curator = curatorLatch(zk.newClient(), curatorPath, "curator");
    followTheNode(
        curatorPath,
        new NodePaths(
            curator::start,
            curator::close,
            curator::getOurPath,
            curator::getLastPathIsLeader,
            () -> curator.await(10, TimeUnit.SECONDS)));

    String path = zk.path("ours");
    LeaderLatch ours = new LeaderLatch(zk.newClient(), path, "ours");
    followTheNode(
        path,
        new NodePaths(
            ours::start,
            ours::close,
            ours::getOurPath,
            ours::getLastPathIsLeader,
            () -> ours.await(10, TimeUnit.SECONDS)));
  }

  /** The steps of the node-path scenario on {@code latch}, made on {@code path} and not started. */
  private static void followTheNode(String path, NodePaths latch) throws Throwable {
    CuratorFramework admin = zk.newClient();
    LeaderLatch first = leading(path, "first");
    assertThat(latch.ourPath().get()).as("before start").isNull();

    latch.start().execute();
    await().until(() -> latch.ourPath().get() != null);
    String node = latch.ourPath().get();
    assertThat(ZKPaths.getPathAndNode(node).getPath()).isEqualTo(path);
    assertThat(ZooKeeperExtension.childrenOrNone(admin, path))
        .contains(ZKPaths.getNodeFromPath(node));
    assertThat(latch.lastPathIsLeader().get()).as("never led").isNull();

    admin.delete().forPath(node);
    first.close(); // the latch's next read finds its node gone: it makes another, and leads

    assertThat(latch.leadsSoon().get()).isTrue();
    String again = latch.ourPath().get();
    assertThat(again).as("the new node").isNotEqualTo(node);
    assertThat(ZooKeeperExtension.childrenOrNone(admin, path))
        .containsExactly(ZKPaths.getNodeFromPath(again));
    assertThat(latch.lastPathIsLeader().get()).as("led with the new node").isEqualTo(again);

    latch.close().execute();
    assertThat(latch.ourPath().get()).as("after close").isNull();
    assertThat(latch.lastPathIsLeader().get()).as("kept after close").isEqualTo(again);
  }

  /** A latch that closes without ever leading never had a leader's node. */
  @Test
  void getLastPathIsLeader_ofALatchThatNeverLed_isNull_asCuratorsIs() throws Exception {
    String path = zk.path("latch");
    LeaderLatch leader = leading(path, "leader");
    LeaderLatch ours = new LeaderLatch(zk.newClient(), path, "ours");
    ours.start();
    var curator = curatorLatch(zk.newClient(), path, "curator");
    curator.start(); // both queue behind the leader, and never lead
    await().until(() -> curator.getOurPath() != null && ours.getOurPath() != null);

    curator.close();
    ours.close();

    assertThat(curator.getLastPathIsLeader()).isNull();
    assertThat(ours.getLastPathIsLeader()).isNull();
    assertThat(ours.getOurPath()).isNull();
    leader.close();
  }

  /** Before start(): Curator's await() throws EOFException and await(time, unit) is false. */
  @Test
  void await_beforeStart_throwsEof_andTheTimedFormIsFalse_asCuratorsDoes() throws Exception {
    String path = zk.path("latch");
    var curator = curatorLatch(zk.newClient(), path, "curator");
    LeaderLatch ours = new LeaderLatch(zk.newClient(), path, "ours");

    assertThatThrownBy(curator::await).isInstanceOf(EOFException.class);
    assertThat(curator.await(10, TimeUnit.MILLISECONDS)).isFalse();
    assertThatThrownBy(ours::await).isInstanceOf(EOFException.class);
    assertThat(ours.await(10, TimeUnit.MILLISECONDS)).isFalse();
  }

  /** A listener added to a closed latch: Curator's takes it silently (it will never be told). */
  @Test
  void addListener_afterClose_isAccepted_asCuratorsIs() throws Exception {
    String path = zk.path("latch");
    var curator = curatorLatch(zk.newClient(), path, "curator");
    LeaderLatch ours = new LeaderLatch(zk.newClient(), path, "ours");
    curator.start();
    ours.start();
    curator.close();
    ours.close();
    LeaderLatchListener listener = new Recording(new CopyOnWriteArrayList<>());

    curator.addListener(listener);
    curator.removeListener(listener);
    ours.addListener(listener);
    ours.removeListener(listener);
  }

  /**
   * await with the interrupt flag set: where Curator's waits (it is not leading and has time), it
   * throws InterruptedException and clears the flag; where it need not wait (it leads, or the time
   * is zero), it answers and the flag stays set.
   */
  @Test
  void await_withTheInterruptFlagSet_actsAsCuratorsDoes() throws Exception {
    String path = zk.path("latch");
    LeaderLatch leader = leading(path, "leader");
    var curator = curatorLatch(zk.newClient(), path, "curator");
    LeaderLatch ours = new LeaderLatch(zk.newClient(), path, "ours");
    curator.start();
    ours.start();
    await().until(() -> ours.getParticipants().size() == 3);

    for (String who : List.of("curator", "ours")) {
      Thread.currentThread().interrupt();
      boolean zero =
          who.equals("curator")
              ? curator.await(0, TimeUnit.SECONDS)
              : ours.await(0, TimeUnit.SECONDS);
      assertThat(zero).as(who + ": await(0) not leading").isFalse();
      assertThat(Thread.interrupted()).as(who + ": flag kept by await(0)").isTrue();

      Thread.currentThread().interrupt();
      assertThatThrownBy(
              () -> {
                if (who.equals("curator")) {
                  curator.await(1, TimeUnit.SECONDS);
                } else {
                  ours.await(1, TimeUnit.SECONDS);
                }
              })
          .as(who)
          .isInstanceOf(InterruptedException.class);
      assertThat(Thread.interrupted()).as(who + ": flag cleared").isFalse();

      Thread.currentThread().interrupt();
      assertThatThrownBy(who.equals("curator") ? curator::await : ours::await)
          .as(who)
          .isInstanceOf(InterruptedException.class);
      assertThat(Thread.interrupted()).as(who + ": flag cleared").isFalse();
    }

    Thread.currentThread().interrupt();
    assertThat(leader.await(1, TimeUnit.SECONDS)).isTrue();
    leader.await();
    assertThat(Thread.interrupted()).as("flag kept by a leader's await").isTrue();
    leader.close();
    curator.close();
    ours.close();
  }

  /**
   * A listener whose callback throws, on an executor of its own: Curator catches and logs it in the
   * executor's task, so a single-thread executor keeps its thread; the thread that runs the next
   * callback is the same.
   */
  @Test
  void aListenerThatThrows_onItsExecutor_doesNotKillTheExecutorsThread() throws Exception {
    for (String who : List.of("curator", "ours")) {
      ExecutorService executor = Executors.newSingleThreadExecutor();
      try {
        List<String> threads = new CopyOnWriteArrayList<>();
        LeaderLatchListener throwing =
            new LeaderLatchListener() {
              @Override
              public void isLeader() {
                threads.add(Thread.currentThread().getName());
                throw new IllegalStateException("a listener's own failure");
              }

              @Override
              public void notLeader() {
                threads.add(Thread.currentThread().getName());
              }
            };
        String path = zk.path("latch-" + who);
        if (who.equals("curator")) {
          var latch =
              new org.apache.curator.framework.recipes.leader.LeaderLatch(
                  zk.newClient(),
                  path,
                  who,
                  org.apache.curator.framework.recipes.leader.LeaderLatch.CloseMode.NOTIFY_LEADER);
          latch.addListener(throwing, executor);
          latch.start();
          await().until(() -> threads.size() == 1);
          latch.close();
        } else {
          LeaderLatch latch =
              new LeaderLatch(zk.newClient(), path, who, LeaderLatch.CloseMode.NOTIFY_LEADER);
          latch.addListener(throwing, executor);
          latch.start();
          await().until(() -> threads.size() == 1);
          latch.close();
        }
        await().until(() -> threads.size() == 2);
        assertThat(threads.get(1)).as(who + ": notLeader's thread").isEqualTo(threads.get(0));
      } finally {
        executor.shutdownNow();
      }
    }
  }

  /**
   * The same listener added twice with two executors: Curator's second add replaces the first (its
   * manager puts the listener again), so callbacks run on the second executor, once.
   */
  @Test
  void aListenerAddedAgainWithAnotherExecutor_runsOnTheLastOne_once() throws Exception {
    for (String who : List.of("curator", "ours")) {
      ExecutorService first = Executors.newSingleThreadExecutor(r -> new Thread(r, "first"));
      ExecutorService second = Executors.newSingleThreadExecutor(r -> new Thread(r, "second"));
      try {
        List<String> threads = new CopyOnWriteArrayList<>();
        LeaderLatchListener listener =
            new LeaderLatchListener() {
              @Override
              public void isLeader() {
                threads.add(Thread.currentThread().getName());
              }

              @Override
              public void notLeader() {}
            };
        String path = zk.path("latch-" + who);
        LeaderLatch probe = new LeaderLatch(zk.newClient(), path, "probe");
        if (who.equals("curator")) {
          var latch = curatorLatch(zk.newClient(), path, who);
          latch.addListener(listener, first);
          latch.addListener(listener, second);
          latch.start();
          await().until(() -> threads.size() == 1);
          latch.close();
        } else {
          LeaderLatch latch = new LeaderLatch(zk.newClient(), path, who);
          latch.addListener(listener, first);
          latch.addListener(listener, second);
          latch.start();
          await().until(() -> threads.size() == 1);
          latch.close();
        }
        probe.start(); // a later election on the path: the earlier callbacks are all out
        probe.await();
        probe.close();
        first.submit(() -> {}).get();
        second.submit(() -> {}).get();
        assertThat(threads).as(who).containsExactly("second");
      } finally {
        first.shutdownNow();
        second.shutdownNow();
      }
    }
  }

  /**
   * An operator deletes the leader's node. Curator's leader watches no node of its own while it
   * leads: it goes on leading beside the next participant, which its deletion elected. Ours stops
   * leading (notLeader), and queues again behind the new leader. A difference, pinned.
   */
  @Test
  void aLeaderWhoseNodeIsDeleted_stopsLeadingAndQueuesAgain_whereCuratorsGoesOnLeading()
      throws Exception {
    CuratorFramework admin = zk.newClient();
    String curatorPath = zk.path("curator");
    var curator = curatorLatch(zk.newClient(), curatorPath, "curator");
    curator.start();
    assertThat(curator.await(10, TimeUnit.SECONDS)).isTrue();
    var curatorNext = curatorLatch(zk.newClient(), curatorPath, "next");
    curatorNext.start();
    await().until(() -> curatorNext.getParticipants().size() == 2);

    admin.delete().forPath(curator.getOurPath());

    assertThat(curatorNext.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(curator.hasLeadership()).as("Curator's deposed leader still leads").isTrue();

    String path = zk.path("ours");
    LeaderLatch ours = new LeaderLatch(zk.newClient(), path, "ours");
    List<String> heard = new CopyOnWriteArrayList<>();
    ours.addListener(new Recording(heard));
    ours.start();
    assertThat(ours.await(10, TimeUnit.SECONDS)).isTrue();
    LeaderLatch next = new LeaderLatch(zk.newClient(), path, "next");
    next.start();
    await().until(() -> next.getParticipants().size() == 2);

    admin.delete().forPath(ours.getOurPath());

    assertThat(next.await(10, TimeUnit.SECONDS)).isTrue();
    await().until(() -> !ours.hasLeadership() && heard.equals(List.of("isLeader", "notLeader")));
    await().until(() -> ours.getParticipants().size() == 2); // queued again, behind next
    assertThat(ours.getLeader().getId()).isEqualTo("next");
    assertThat(ours.hasLeadership()).isFalse();
    curator.close();
    curatorNext.close();
    ours.close();
    next.close();
  }

  /**
   * With the client's SessionConnectionStateErrorPolicy (SUSPENDED no error), Curator's leader
   * keeps leading while its connection is suspended; ours stops (notLeader) whatever the policy,
   * and leads again once the connection is back. A difference, pinned.
   */
  @Test
  void underSessionConnectionStateErrorPolicy_aSuspendedLeaderStopsLeading_whereCuratorsLeads()
      throws Exception {
    TcpProxy proxy = zk.proxy();
    List<ConnectionState> curatorStates = new CopyOnWriteArrayList<>();
    CuratorFramework curatorClient = throughProxy(proxy);
    curatorClient.getConnectionStateListenable().addListener((c, s) -> curatorStates.add(s));
    var curator = curatorLatch(curatorClient, zk.path("curator"), "curator");
    LeaderLatch ours = new LeaderLatch(throughProxy(proxy), zk.path("ours"), "ours");
    curator.start();
    ours.start();
    assertThat(curator.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ours.await(10, TimeUnit.SECONDS)).isTrue();

    proxy.cut();

    await().atMost(Duration.ofSeconds(15)).until(() -> !ours.hasLeadership());
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> curatorStates.contains(ConnectionState.SUSPENDED));
    assertThat(curator.hasLeadership()).as("Curator's, suspended, under this policy").isTrue();
    proxy.heal();
    assertThat(ours.await(20, TimeUnit.SECONDS)).isTrue();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> curatorStates.contains(ConnectionState.RECONNECTED));
    assertThat(curator.hasLeadership()).isTrue();
    curator.close();
    ours.close();
  }

  private static CuratorFramework throughProxy(TcpProxy proxy) {
    return zk.newClient(
        b ->
            b.connectString(proxy.connectString())
                .sessionTimeoutMs(20_000)
                .connectionTimeoutMs(2_000)
                .retryPolicy(new RetryNTimes(3, 100))
                .connectionStateErrorPolicy(new SessionConnectionStateErrorPolicy()));
  }

  /** Records what a latch tells it, as "isLeader" and "notLeader". */
  record Recording(List<String> heard) implements LeaderLatchListener {
    @Override
    public void isLeader() {
      heard.add("isLeader");
    }

    @Override
    public void notLeader() {
      heard.add("notLeader");
    }
  }
}

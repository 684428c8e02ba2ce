package io.lockstep.recipes.leader.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.LeaderLayout;
import io.lockstep.recipes.leader.Leadership;
import io.lockstep.recipes.leader.LeadershipListener;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.ExclusionChecker;
import io.lockstep.testing.FencedStore;
import io.lockstep.testing.LockPart;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Epochs across a mixed fleet under faults: two Lockstep participants and two Curator ones ({@code
 * LeaderLatch}, or {@code LeaderSelector} with auto-requeue, as the layout says), each on its own
 * client, on one path. Every leader writes to a {@link FencedStore} twice with its epoch, then
 * steps down. A Curator leader's epoch is derived as the lock tests derive an {@code
 * InterProcessMutex} holder's token: the parent's {@code pzxid} read while its node is first. The
 * harness expires a session of each kind of participant and restarts the server.
 *
 * <p>The history must show: no two leaders that both counted at once ({@link ExclusionChecker});
 * epochs in the order the leaderships began, never equal; no write refused while its leadership
 * counted (a refusal means a higher epoch had been accepted first: an earlier leader with a higher
 * epoch, or two leaders at once).
 */
@Timeout(240)
class LeaderFencingInteropTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final int LEADERSHIPS_PER_PHASE = 12;
  private static final Duration PHASE_PATIENCE = Duration.ofSeconds(60);

  private final ExclusionChecker checker = new ExclusionChecker();
  private final FencedStore store = new FencedStore();
  private final AtomicBoolean stopping = new AtomicBoolean();
  private final AtomicLong begun = new AtomicLong();
  private final Map<String, ExclusionChecker.Hold> current = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> ledBy = new ConcurrentHashMap<>();
  private final Queue<String> refusedWhileCounting = new ConcurrentLinkedQueue<>();
  private final Queue<String> errors = new ConcurrentLinkedQueue<>();
  private final List<Long> epochs = new ArrayList<>();
  private final LongAdder staleRefused = new LongAdder();
  private final LongAdder noEpoch = new LongAdder();
  private final LongAdder lateRefused = new LongAdder();
  private final Queue<String> lateAccepted = new ConcurrentLinkedQueue<>();

  /** By participant: its next leader expires its own session after its first write. */
  private final Map<String, CompletableFuture<Void>> midLeadershipExpiry =
      new ConcurrentHashMap<>();

  private String path;

  @ParameterizedTest
  @EnumSource(LeaderLayout.class)
  void mixedLeaders_underExpiryAndRestart_haveRisingEpochs_andNoLeaderWriteIsRefused(
      LeaderLayout layout) throws Exception {
    zk.skipLeakCheck();
    path = zk.path("leader-" + layout);
    CuratorFramework oursA = zk.newClient();
    CuratorFramework oursB = zk.newClient();
    CuratorFramework curatorA = zk.newClient();
    CuratorFramework curatorB = zk.newClient();
    List<AutoCloseable> participants = new ArrayList<>();
    List<Thread> workers = new ArrayList<>();
    workers.add(ours("ours-A", oursA, layout, participants));
    workers.add(ours("ours-B", oursB, layout, participants));
    if (layout == LeaderLayout.LEADER_LATCH) {
      workers.add(curatorLatch("curator-A", curatorA, participants));
      workers.add(curatorLatch("curator-B", curatorB, participants));
    } else {
      curatorSelector("curator-A", curatorA, participants);
      curatorSelector("curator-B", curatorB, participants);
    }
    List<CuratorFramework> all = List.of(oursA, oursB, curatorA, curatorB);

    try {
      awaitProgress("warm-up");
      expireDuringALeadershipOf("ours-A");
      awaitProgress("after ours-A's session expired");
      expireDuringALeadershipOf("curator-A");
      awaitProgress("after curator-A's session expired");
      zk.server().restart();
      awaitConnected(all);
      awaitProgress("after the server restarted");
      expireDuringALeadershipOf("ours-B");
      awaitProgress("after ours-B's session expired");
      expireDuringALeadershipOf("curator-B");
      awaitProgress("after curator-B's session expired");
    } finally {
      stopping.set(true);
      for (Thread worker : workers) {
        worker.join(TimeUnit.SECONDS.toMillis(30));
      }
      for (AutoCloseable participant : participants) {
        try {
          participant.close();
        } catch (Exception | Error e) {
          errors.add("close: " + e);
        }
      }
    }

    ExclusionChecker.Verdict verdict = checker.verdict();
    System.out.printf(
        "LeaderFencingInteropTest %s: leaderships=%d led-by=%s overlaps=%d excused=%d"
            + " stale-refused=%d no-epoch=%d late-refused=%d%n",
        layout,
        verdict.holds(),
        ledBy,
        verdict.overlaps(),
        verdict.excused(),
        staleRefused.sum(),
        noEpoch.sum(),
        lateRefused.sum());
    assertThat(workers).as("workers still running").noneMatch(Thread::isAlive);
    assertThat(errors).as("errors").isEmpty();
    assertThat(verdict.violations()).as("overlaps and epochs out of order").isEmpty();
    assertThat(refusedWhileCounting).as("writes refused while leading").isEmpty();
    assertThat(lateAccepted).as("writes of an expired leader after a newer one's").isEmpty();
    assertThat(lateRefused.sum()).as("expired leaders that wrote late").isEqualTo(4);
    assertThat(ledBy.keySet())
        .containsExactlyInAnyOrder("ours-A", "ours-B", "curator-A", "curator-B");
    assertThat(ledBy.values()).allMatch(n -> n.sum() >= 3, "each led at least three times");
    List<Long> sorted;
    synchronized (epochs) {
      sorted = epochs.stream().sorted(Comparator.naturalOrder()).toList();
    }
    assertThat(sorted).as("no two leaderships share an epoch").doesNotHaveDuplicates();
  }

  // ---- the participants ----

  private Thread ours(
      String name, CuratorFramework client, LeaderLayout layout, List<AutoCloseable> closing) {
    LeaderElection election =
        LeaderElection.builder(client, path).participantId(name).layout(layout).build();
    election.addListener(
        new LeadershipListener() {
          @Override
          public void atRisk(Leadership leadership) {
            pause(name);
          }

          @Override
          public void lost(Leadership leadership) {
            pause(name);
          }
        });
    election.start();
    closing.add(election);
    return worker(
        name,
        () -> {
          Optional<Leadership> won = election.awaitLeadership(Duration.ofMillis(200));
          if (won.isPresent()) {
            Leadership leadership = won.get();
            long epoch;
            try {
              epoch = leadership.fencingToken();
            } catch (IllegalMonitorStateException | IllegalStateException lost) {
              epoch = 0;
            }
            lead(name, client, epoch, () -> leadership.state() == LockState.HELD);
            leadership.close();
          }
        });
  }

  private Thread curatorLatch(String name, CuratorFramework client, List<AutoCloseable> closing)
      throws Exception {
    LeaderLatch latch = new LeaderLatch(client, path, name);
    latch.addListener(
        new LeaderLatchListener() {
          @Override
          public void isLeader() {}

          @Override
          public void notLeader() {
            pause(name);
          }
        });
    latch.start();
    closing.add(latch);
    LeaderLatch[] now = {latch};
    return worker(
        name,
        () -> {
          LeaderLatch leading = now[0];
          if (leading.await(200, TimeUnit.MILLISECONDS)) {
            long epoch = curatorEpoch(client, ZKPaths.getNodeFromPath(leading.getOurPath()));
            lead(name, client, epoch, leading::hasLeadership);
            closing.remove(leading);
            leading.close(); // step down; a new latch queues again
            LeaderLatch next = new LeaderLatch(client, path, name);
            next.addListener(
                new LeaderLatchListener() {
                  @Override
                  public void isLeader() {}

                  @Override
                  public void notLeader() {
                    pause(name);
                  }
                });
            next.start();
            closing.add(next);
            now[0] = next;
          }
        });
  }

  private void curatorSelector(String name, CuratorFramework client, List<AutoCloseable> closing) {
    AtomicBoolean connected = new AtomicBoolean(true);
    LeaderSelector selector =
        new LeaderSelector(
            client,
            path,
            new LeaderSelectorListener() {
              @Override
              public void takeLeadership(CuratorFramework c) throws Exception {
                if (stopping.get()) {
                  return;
                }
                long epoch = curatorEpochOfFirst(client, name);
                lead(name, client, epoch, connected::get);
              }

              @Override
              public void stateChanged(CuratorFramework c, ConnectionState state) {
                connected.set(state.isConnected());
                if (!state.isConnected()) {
                  pause(name);
                }
              }
            });
    selector.setId(name);
    selector.autoRequeue();
    selector.start();
    closing.add(selector);
  }

  private Thread worker(String name, ThrowingRunnable step) {
    Thread thread =
        new Thread(
            () -> {
              while (!stopping.get()) {
                try {
                  step.run();
                } catch (Exception e) {
                  if (!stopping.get()) {
                    System.out.println(name + ": " + e); // faults make Curator throw; go on
                  }
                }
              }
            },
            "leader-" + name);
    thread.setDaemon(true);
    thread.start();
    return thread;
  }

  /** Leads: records the leadership, writes twice with its epoch, and ends it. */
  private void lead(String name, CuratorFramework client, long epoch, HeldCheck held) {
    if (epoch == 0) {
      noEpoch.increment();
      return;
    }
    long session = Sessions.id(client);
    ExclusionChecker.Hold hold =
        checker.begin(name, List.of(LockPart.mutex(path)), epoch, session, held.holds());
    current.put(name, hold);
    begun.incrementAndGet();
    ledBy.computeIfAbsent(name, n -> new LongAdder()).increment();
    synchronized (epochs) {
      epochs.add(epoch);
    }
    try {
      for (int write = 0; write < 2; write++) {
        boolean counting = held.holds() && checker.isCounting(hold);
        if (!store.write("state", epoch)) {
          if (counting) {
            refusedWhileCounting.add(name + " epoch 0x" + Long.toHexString(epoch));
          } else {
            staleRefused.increment();
          }
        }
        try {
          client.checkExists().forPath(path); // a round trip between the writes
        } catch (Exception faulted) {
          // the harness's faults: go on writing as a paused leader would
        }
        CompletableFuture<Void> fault = midLeadershipExpiry.remove(name);
        if (fault != null) {
          expireMidLeadership(name, client, epoch, fault);
        }
      }
    } finally {
      checker.end(hold);
      current.remove(name, hold);
    }
  }

  private void pause(String name) {
    ExclusionChecker.Hold hold = current.get(name);
    if (hold != null) {
      checker.pause(hold);
    }
  }

  /** The parent's pzxid, read while {@code node} is a child (else 0: the leadership is gone). */
  private long curatorEpoch(CuratorFramework client, String node) {
    Stat stat = new Stat();
    try {
      List<String> children = client.getChildren().storingStatIn(stat).forPath(path);
      return children.contains(node) ? stat.getPzxid() : 0;
    } catch (Exception failed) {
      return 0;
    }
  }

  /** The parent's pzxid, read while the first node of the queue carries our id (else 0). */
  private long curatorEpochOfFirst(CuratorFramework client, String id) {
    Stat stat = new Stat();
    try {
      List<String> children = client.getChildren().storingStatIn(stat).forPath(path);
      Optional<String> first =
          children.stream().min(Comparator.comparing(n -> n.substring(n.length() - 10)));
      if (first.isEmpty()) {
        return 0;
      }
      byte[] data = client.getData().forPath(ZKPaths.makePath(path, first.get()));
      return id.equals(new String(data, StandardCharsets.UTF_8)) ? stat.getPzxid() : 0;
    } catch (Exception failed) {
      return 0;
    }
  }

  /**
   * A leader whose session the harness expires after its first write goes on as a paused leader
   * would: once a newer leader has written, it writes again with its old epoch, which the store
   * must refuse.
   */
  private void expireMidLeadership(
      String name, CuratorFramework client, long epoch, CompletableFuture<Void> fault) {
    try {
      expire(client);
      fault.complete(null);
      await("a newer leader writes after " + name + "'s session expired")
          .atMost(PHASE_PATIENCE)
          .until(() -> store.highest("state") > epoch);
      if (store.write("state", epoch)) {
        lateAccepted.add(name + " epoch 0x" + Long.toHexString(epoch));
      } else {
        lateRefused.increment();
      }
    } catch (Exception | Error e) {
      fault.completeExceptionally(e);
    }
  }

  // ---- the harness ----

  /** Arms an expiry for the next leadership of {@code name}, and waits until it happened. */
  private void expireDuringALeadershipOf(String name) throws Exception {
    CompletableFuture<Void> done = new CompletableFuture<>();
    midLeadershipExpiry.put(name, done);
    done.get(PHASE_PATIENCE.toSeconds(), TimeUnit.SECONDS);
  }

  private void expire(CuratorFramework client) throws Exception {
    awaitConnected(List.of(client));
    long session = Sessions.id(client);
    checker.sessionEnds(session);
    assertThat(Sessions.expire(client, zk.server().getConnectString())).isEqualTo(session);
  }

  private void awaitProgress(String phase) {
    long target = begun.get() + LEADERSHIPS_PER_PHASE;
    await(LEADERSHIPS_PER_PHASE + " leaderships " + phase)
        .atMost(PHASE_PATIENCE)
        .pollInterval(Duration.ofMillis(20))
        .until(() -> begun.get() >= target);
  }

  private static void awaitConnected(List<CuratorFramework> clients) {
    await("clients connected")
        .atMost(PHASE_PATIENCE)
        .until(() -> clients.stream().allMatch(c -> c.getZookeeperClient().isConnected()));
  }

  @FunctionalInterface
  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  @FunctionalInterface
  private interface HeldCheck {
    boolean holds();
  }
}

package io.lockstep.chaos;

import static org.awaitility.Awaitility.await;

import io.lockstep.testing.Ensemble;
import io.lockstep.testing.ExclusionChecker;
import io.lockstep.testing.FaultInjector;
import io.lockstep.testing.FencedStore;
import io.lockstep.testkit.internal.Links;
import io.lockstep.testkit.internal.ServerStats;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.utils.CloseableUtils;
import org.awaitility.core.ConditionTimeoutException;

/**
 * One chaos run: a three-server ensemble, clients behind fault proxies running every recipe in a
 * seeded random schedule, a fault schedule, and the checks of the run's history.
 *
 * <p>Each client reaches each server through its own {@link Links}, so the harness can cut one
 * client off from the whole ensemble (with resets, or silently), slow its links, lose the answer to
 * its next request, expire its session, or close it and start a fresh one in its place, while
 * servers (the leader among them) are killed and restarted. After the run the workers stop, the
 * faults heal, and the checkers look at what happened.
 */
final class ChaosRun implements AutoCloseable {
  static final int SESSION_TIMEOUT_MS = 6_000;
  static final int CONNECTION_TIMEOUT_MS = 3_000;

  private static final Ensemble.ClientSettings CLIENTS =
      new Ensemble.ClientSettings(SESSION_TIMEOUT_MS, CONNECTION_TIMEOUT_MS, 100, 8, 1_000);

  /**
   * The run's shape.
   *
   * @param clientFaults whether the schedule also closes clients, starts clients behind slow links
   *     and loses the answers to their creates
   */
  record Config(
      long seed, Duration duration, int clients, int workersPerClient, boolean clientFaults) {}

  /**
   * A ZooKeeper write committed under a lock: the data node, the writer's token, the commit zxid.
   */
  record Commit(String node, long token, long zxid) {}

  /** A write the fenced resource refused. */
  record Refusal(String path, long token, long at, boolean holderCounting) {}

  /**
   * One client slot: its links (one proxy per server), its current Curator client (replaced when
   * the schedule closes it), and what its workers are doing.
   */
  static final class Client {
    final int id;
    final Links links;
    final Set<Integer> holding = ConcurrentHashMap.newKeySet();
    final Set<Integer> slowHolds = ConcurrentHashMap.newKeySet();
    final AtomicInteger acquiring = new AtomicInteger();

    /** Set by the schedule: the next worker to acquire loses the answer to its next request. */
    final AtomicBoolean loseNextAnswer = new AtomicBoolean();

    // Volatile: replaced by the fault schedule, read by the workers for each new lock.
    private volatile CuratorFramework curator;

    Client(int id, Links links, CuratorFramework curator) {
      this.id = id;
      this.links = links;
      this.curator = curator;
    }

    CuratorFramework curator() {
      return curator;
    }

    /** Whether a worker is waiting for or holding a lock. */
    boolean busy() {
      return acquiring.get() > 0 || !holding.isEmpty();
    }
  }

  final Config config;
  final Tally tally = new Tally();
  final ExclusionChecker checker = new ExclusionChecker();
  final FencedStore fenced = new FencedStore();
  final ConcurrentLinkedQueue<Commit> commits = new ConcurrentLinkedQueue<>();
  final ConcurrentLinkedQueue<Refusal> refusals = new ConcurrentLinkedQueue<>();
  final ConcurrentLinkedQueue<ElectionChecks.Elected> elections = new ConcurrentLinkedQueue<>();
  final AtomicBoolean stopping = new AtomicBoolean();
  final List<Client> clients = new ArrayList<>();
  private final ConcurrentLinkedQueue<CuratorFramework> closed = new ConcurrentLinkedQueue<>();
  private Ensemble ensemble;
  private FaultInjector faults;
  private CuratorFramework admin;

  ChaosRun(Config config) {
    this.config = config;
  }

  /** Runs the whole thing and returns the tally (violations included). */
  Tally run() throws Exception {
    ensemble = Ensemble.embedded(3, CLIENTS);
    faults = new FaultInjector(ensemble, 2);
    admin = ensemble.newClient();
    for (String path : Workload.allLockPaths()) {
      admin.create().creatingParentsIfNeeded().forPath(Workload.dataNode(path), new byte[8]);
    }
    admin.create().creatingParentsIfNeeded().forPath(ElectionWorkload.DATA_NODE, new byte[8]);
    checker.capacity(SemaphoreOps.PATH, SemaphoreOps.MAX_LEASES);
    for (int i = 0; i < config.clients(); i++) {
      Links links = Links.to(ensemble.servers());
      clients.add(new Client(i, links, ensemble.newClient(links.connectString())));
    }

    Random random = new Random(config.seed());
    List<Thread> workers = new ArrayList<>();
    for (Client client : clients) {
      for (int w = 0; w < config.workersPerClient(); w++) {
        Workload workload = new Workload(this, client, w, new Random(random.nextLong()));
        Thread thread = new Thread(workload, "chaos-client" + client.id + "-worker" + w);
        thread.setDaemon(true);
        workers.add(thread);
      }
      Thread participant =
          new Thread(
              new ElectionWorkload(this, client, new Random(random.nextLong())),
              "chaos-client" + client.id + "-leader");
      participant.setDaemon(true);
      workers.add(participant);
    }
    FaultSchedule schedule = new FaultSchedule(this, faults, new Random(random.nextLong()));
    Thread scheduleThread = new Thread(schedule, "chaos-faults");
    scheduleThread.setDaemon(true);

    workers.forEach(Thread::start);
    scheduleThread.start();
    TimeUnit.MILLISECONDS.sleep(config.duration().toMillis()); // the run's length is the point
    stopping.set(true);

    scheduleThread.join(60_000);
    faults.healEverything();
    faults.failures().forEach(tally::violation);
    for (Thread worker : workers) {
      worker.join(120_000);
      if (worker.isAlive()) {
        tally.violation(
            "worker did not finish its last operation within 120 s: " + worker.getName());
      }
    }
    checkHistory();
    checkNothingLeft();
    return tally;
  }

  /** The faults, for the workers that arm a lost answer right before they acquire. */
  FaultInjector faults() {
    return faults;
  }

  Ensemble ensemble() {
    return ensemble;
  }

  /**
   * Closes the client's Curator client, as an application shutting a component down would; its
   * workers' next locks fail until {@link #startClient} puts a fresh one in its place. Its holds
   * end in the history at the close: the closed client's session ends with it, and fencing is what
   * must protect the resource from a holder that was not told.
   */
  void closeClient(Client client) {
    CuratorFramework old = client.curator;
    checker.sessionEnds(Sessions.id(old));
    old.close();
    closed.add(old);
  }

  /** Puts a fresh Curator client in the client's place, started but not yet connected. */
  void startClient(Client client) {
    client.curator = ensemble.startClient(client.links.connectString());
  }

  /**
   * Checkers 1 and 2: no overlap (of locks and leaderships), no more leases than the semaphore has,
   * tokens and epochs in hold order, epochs distinct, fenced writes consistent.
   */
  private void checkHistory() {
    countLocalSuccessions();
    checker.overlaps().forEach(tally::violation);
    checker.tokenOrderViolations().forEach(tally::violation);
    checker.capacityViolations().forEach(tally::violation);
    ElectionChecks.sharedEpochs(elections).forEach(tally::violation);
    ElectionChecks.commitsAfterANewerEpoch(ElectionWorkload.DATA_NODE, commits, elections)
        .forEach(tally::violation);
    checkRefusals();
    checkCommitOrder();
  }

  /**
   * Counts, per path, the holds of a local-handoff lock that came right after another worker's of
   * the same session (the place handed on in memory, or given back and taken again at once): the
   * proof that workers shared a place.
   */
  private void countLocalSuccessions() {
    Map<String, List<ExclusionChecker.Segment>> byPath = new HashMap<>();
    Set<Integer> seen = new HashSet<>();
    checker.segments().stream()
        .sorted(Comparator.comparingLong(ExclusionChecker.Segment::start))
        .filter(segment -> seen.add(segment.hold())) // a hold's first stretch, once per hold
        .forEach(
            segment -> byPath.computeIfAbsent(segment.path(), p -> new ArrayList<>()).add(segment));
    for (List<ExclusionChecker.Segment> holds : byPath.values()) {
      for (int i = 1; i < holds.size(); i++) {
        ExclusionChecker.Segment previous = holds.get(i - 1);
        ExclusionChecker.Segment current = holds.get(i);
        if (Workload.isLocalHandoff(previous.holder())
            && Workload.isLocalHandoff(current.holder())
            && previous.session() == current.session()
            && !previous.holder().equals(current.holder())) {
          tally.localSuccessions.increment();
        }
      }
    }
  }

  /**
   * The fenced resource may refuse only a holder that was no longer counting, or one overtaken by a
   * hold with a higher token: refusing the current holder would mean tokens are out of order.
   */
  private void checkRefusals() {
    for (Refusal refusal : refusals) {
      if (refusal.holderCounting()
          && !checker.overtakenBefore(refusal.path(), refusal.token(), refusal.at())) {
        tally.violation("fenced resource refused the current holder: " + refusal);
      }
    }
  }

  /**
   * Writes committed under a lock's ownership checks: in each data node, in commit (zxid) order,
   * tokens never go down. A stale holder's write committed after a newer holder's would.
   */
  private void checkCommitOrder() {
    Map<String, List<Commit>> byNode = new ConcurrentHashMap<>();
    for (Commit commit : commits) {
      byNode.computeIfAbsent(commit.node(), n -> new ArrayList<>()).add(commit);
    }
    byNode.forEach(
        (node, list) -> {
          list.sort(Comparator.comparingLong(Commit::zxid));
          for (int i = 1; i < list.size(); i++) {
            if (list.get(i).token() < list.get(i - 1).token()) {
              tally.violation(
                  "stale write committed to "
                      + node
                      + ": "
                      + list.get(i - 1)
                      + " then "
                      + list.get(i));
            }
          }
        });
  }

  /** Checker 4: once faults heal and workers stop, no lock node and no watch on any server. */
  private void checkNothingLeft() throws Exception {
    for (Client client : clients) {
      if (!client.curator.blockUntilConnected(60, TimeUnit.SECONDS)) {
        tally.violation("client " + client.id + " did not reconnect after the faults healed");
      }
    }
    reportLeftovers("with clients connected", Duration.ofSeconds(60));
    for (Client client : clients) {
      client.curator.close();
    }
    reportLeftovers("after the clients closed", Duration.ofSeconds(30));
  }

  private void reportLeftovers(String when, Duration patience) {
    try {
      await()
          .atMost(patience)
          .pollInterval(Duration.ofMillis(500))
          .until(() -> leftovers().isEmpty());
    } catch (ConditionTimeoutException e) {
      leftovers().forEach(left -> tally.violation("left behind " + when + ": " + left));
    }
  }

  private List<String> leftovers() {
    List<String> found = new ArrayList<>();
    for (InstanceSpec instance : ensemble.servers()) {
      ServerStats stats = new ServerStats("127.0.0.1", instance.getPort());
      try {
        long ephemerals = stats.monitor("zk_ephemerals_count");
        if (ephemerals > 0) {
          found.add(instance.getPort() + ": " + ephemerals + " ephemeral nodes");
        }
        stats.watchesByPath().keySet().stream()
            .filter(path -> path.startsWith("/chaos"))
            .forEach(path -> found.add(instance.getPort() + ": watch on " + path));
      } catch (RuntimeException e) {
        found.add(instance.getPort() + ": unreadable (" + e.getMessage() + ")");
      }
    }
    return found;
  }

  @Override
  public void close() throws Exception {
    if (faults != null) {
      faults.close();
    }
    clients.forEach(client -> client.links.close());
    clients.forEach(client -> CloseableUtils.closeQuietly(client.curator));
    closed.forEach(CloseableUtils::closeQuietly);
    CloseableUtils.closeQuietly(admin);
    CloseableUtils.closeQuietly(ensemble);
  }
}

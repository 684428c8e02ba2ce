package io.lockstep.chaos;

import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ServerStats;
import io.lockstep.testing.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.utils.CloseableUtils;
import org.awaitility.core.ConditionTimeoutException;

/**
 * One chaos run: a three-server ensemble, clients behind fault proxies running every recipe in a
 * seeded random schedule, a fault injector, and the checks of the run's history.
 *
 * <p>Each client reaches each server through its own {@link TcpProxy}, so the harness can cut one
 * client off from the whole ensemble (with resets, or silently), slow its links, or expire its
 * session, while servers (the leader among them) are killed and restarted. After the run the
 * workers stop, the faults heal, and the checkers look at what happened.
 */
final class ChaosRun implements AutoCloseable {
  static final int SESSION_TIMEOUT_MS = 6_000;
  static final int CONNECTION_TIMEOUT_MS = 3_000;

  /** The run's shape. */
  record Config(long seed, Duration duration, int clients, int workersPerClient) {}

  /**
   * A ZooKeeper write committed under a lock: the data node, the writer's token, the commit zxid.
   */
  record Commit(String node, long token, long zxid) {}

  /** A write the fenced resource refused. */
  record Refusal(String path, long token, long at, boolean holderCounting) {}

  /** One client: its session, its proxies (one per server) and its workers' current holds. */
  static final class Client {
    final int id;
    final CuratorFramework curator;
    final List<TcpProxy> proxies;
    final Map<Integer, History.Hold> currentHolds = new ConcurrentHashMap<>();
    final java.util.Set<Integer> slowHolds = ConcurrentHashMap.newKeySet();

    Client(int id, CuratorFramework curator, List<TcpProxy> proxies) {
      this.id = id;
      this.curator = curator;
      this.proxies = proxies;
    }
  }

  final Config config;
  final Tally tally = new Tally();
  final History history = new History();
  final FencedResource fenced = new FencedResource();
  final ConcurrentLinkedQueue<Commit> commits = new ConcurrentLinkedQueue<>();
  final ConcurrentLinkedQueue<Refusal> refusals = new ConcurrentLinkedQueue<>();
  final AtomicBoolean stopping = new AtomicBoolean();
  final List<Client> clients = new ArrayList<>();
  private TestingCluster cluster;
  private CuratorFramework admin;

  ChaosRun(Config config) {
    this.config = config;
  }

  static {
    System.setProperty("zookeeper.4lw.commands.whitelist", "*");
    System.setProperty("zookeeper.admin.enableServer", "false");
  }

  /** Runs the whole thing and returns the tally (violations included). */
  Tally run() throws Exception {
    cluster = new TestingCluster(3);
    cluster.start();
    admin = newClient(cluster.getConnectString());
    for (String path : Workload.allLockPaths()) {
      admin.create().creatingParentsIfNeeded().forPath(Workload.dataNode(path), new byte[8]);
    }
    for (int i = 0; i < config.clients(); i++) {
      List<TcpProxy> proxies = new ArrayList<>();
      List<String> addresses = new ArrayList<>();
      for (InstanceSpec instance : cluster.getInstances()) {
        TcpProxy proxy = TcpProxy.start("127.0.0.1", instance.getPort());
        proxies.add(proxy);
        addresses.add(proxy.connectString());
      }
      clients.add(new Client(i, newClient(String.join(",", addresses)), proxies));
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
    }
    FaultInjector faults = new FaultInjector(this, new Random(random.nextLong()));
    Thread faultThread = new Thread(faults, "chaos-faults");
    faultThread.setDaemon(true);

    workers.forEach(Thread::start);
    faultThread.start();
    TimeUnit.MILLISECONDS.sleep(config.duration().toMillis()); // the run's length is the point
    stopping.set(true);

    faultThread.join(60_000);
    faults.healEverything();
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

  private CuratorFramework newClient(String connectString) throws InterruptedException {
    CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString(connectString)
            .sessionTimeoutMs(SESSION_TIMEOUT_MS)
            .connectionTimeoutMs(CONNECTION_TIMEOUT_MS)
            .retryPolicy(new ExponentialBackoffRetry(100, 8, 1_000))
            .build();
    client.start();
    if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("client could not connect to " + connectString);
    }
    return client;
  }

  TestingCluster cluster() {
    return cluster;
  }

  /** Checkers 1 and 2: no overlap, tokens in hold order, fenced writes consistent. */
  private void checkHistory() {
    history.overlaps().forEach(tally::violation);
    history.tokenOrderViolations().forEach(tally::violation);
    checkRefusals();
    checkCommitOrder();
  }

  /**
   * The fenced resource may refuse only a holder that was no longer counting, or one overtaken by a
   * hold with a higher token: refusing the current holder would mean tokens are out of order.
   */
  private void checkRefusals() {
    for (Refusal refusal : refusals) {
      if (refusal.holderCounting() && !overtaken(refusal)) {
        tally.violation("fenced resource refused the current holder: " + refusal);
      }
    }
  }

  private boolean overtaken(Refusal refusal) {
    return history.overtakenBefore(refusal.path(), refusal.token(), refusal.at());
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
    for (InstanceSpec instance : cluster.getInstances()) {
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
  public void close() {
    clients.forEach(client -> client.proxies.forEach(TcpProxy::close));
    clients.forEach(client -> CloseableUtils.closeQuietly(client.curator));
    CloseableUtils.closeQuietly(admin);
    CloseableUtils.closeQuietly(cluster);
  }
}

package io.lockstep.faults;

import io.lockstep.testkit.internal.ServerStats;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * One run of the process fault suite: ZooKeeper servers and worker processes in child JVMs, a
 * schedule of faults, and the checks of what happened.
 *
 * <ol>
 *   <li>Start the servers ({@link ZkServers}), create each group's data nodes, start the hub, the
 *       node watcher and one worker process per member of each group ({@link Workers}); wait until
 *       every worker is ready and every group has granted its lock once.
 *   <li>Run the fault schedule; after each wave wait (at most the bound) until every group grants
 *       again. Then wait until every worker has been granted since the last heal.
 *   <li>Quiesce the workers (their clients stay connected) and check that no ephemeral node and no
 *       watch is left under the run's root on any server; stop them and check they exit.
 *   <li>Check the history: {@link SafetyChecks}, {@link LivenessChecks}, {@link NodeChecks}.
 * </ol>
 *
 * <p>Every child JVM is ended when the run closes, also after a failure.
 */
final class ProcessFaultRun implements AutoCloseable {
  /**
   * The shape of a run.
   *
   * @param name names the run in reports and its directory
   * @param seed the seed of the workers' and the schedule's random choices
   * @param servers 1 (standalone) or 3 (an ensemble)
   * @param groups the groups of workers
   * @param schedule the faults
   * @param fencing whether holders fence their writes and the store checks tokens (false only to
   *     prove the checkers can fail)
   * @param directory where the servers' data and every child's log go
   */
  record Config(
      String name,
      long seed,
      int servers,
      List<GroupSpec> groups,
      FaultSchedule schedule,
      boolean fencing,
      Path directory) {}

  private static final Duration READY = Duration.ofSeconds(90);

  private final Config config;
  private final Findings findings = new Findings();
  private final History history = new History();
  private final Map<String, GroupSpec> groups = new LinkedHashMap<>();
  private final Set<Integer> unavailableServers = ConcurrentHashMap.newKeySet();
  // Made by run(), on the test's thread, and closed by close() on the same thread.
  private ChildProcesses children;
  private ZkServers servers;
  private Hub hub;
  private NodeWatcher watcher;
  private Workers workers;

  ProcessFaultRun(Config config) {
    this.config = config;
    config.groups().forEach(group -> groups.put(group.name(), group));
  }

  /** Runs the whole thing and returns its report. */
  RunReport run() throws IOException, InterruptedException {
    children = new ChildProcesses(config.directory().resolve("logs"));
    servers = ZkServers.start(children, config.directory().resolve("data"), config.servers());
    log("servers up: " + servers.connectString());
    createDataNodes();
    StoreService store = new StoreService(!config.fencing());
    hub = new Hub(history, store);
    watcher =
        new NodeWatcher(
            () ->
                servers.servers().stream()
                    .filter(s -> !unavailableServers.contains(s.id()))
                    .toList(),
            ClientVariant.ROOT + "/");
    watcher.start();
    workers =
        new Workers(children, servers.connectString(), hub.port(), config.fencing(), config.seed());
    for (GroupSpec group : config.groups()) {
      workers.start(group);
    }
    awaitReady();
    log("workers ready: " + workers.all().size());
    awaitGranting(0, Duration.ofSeconds(60));
    long start = System.nanoTime();
    log("every group granted");
    Faults faults =
        new Faults(
            history,
            workers,
            servers,
            children,
            hub,
            new Targets(history, workers, watcher, new Random(config.seed())),
            groups,
            unavailableServers);
    config.schedule().run(faults, this::recovered);
    long lastHeal = history.faults().stream().mapToLong(FaultRecord::heal).max().orElse(start);
    awaitEveryWorkerGranted(lastHeal);
    long end = System.nanoTime();
    log("faults done: " + history.faults().size() + ", quiescing");
    checkWorkersAlive();
    quiesce();
    checkNothingLeft();
    stop();
    watcher.close();
    RunRecord record =
        new RunRecord(
            history.events(),
            history.faults(),
            store.decisions(),
            watcher.lives(),
            workerGroups(),
            groups,
            start,
            end,
            workers.deaths());
    HistoryFile.write(record, config.directory().resolve("history.txt"));
    hub.failures().forEach(f -> findings.violation("protocol", f));
    HistoryReplay replay = new HistoryReplay(record);
    SafetyChecks.check(replay, findings);
    Map<FaultRecord, Long> recoveries = LivenessChecks.check(replay, findings);
    NodeChecks.check(record, findings);
    return new RunReport(
        config.name(),
        config.seed(),
        config.servers(),
        workers.all().size(),
        TimeUnit.NANOSECONDS.toMillis(end - start),
        recoveries,
        faults.missed(),
        findings,
        children.logs());
  }

  private void createDataNodes() throws InterruptedException {
    try (CuratorFramework admin =
        CuratorFrameworkFactory.newClient(
            servers.connectString(), 30_000, 10_000, new RetryNTimes(10, 500))) {
      admin.start();
      if (!admin.blockUntilConnected(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the admin client did not connect");
      }
      for (GroupSpec group : config.groups()) {
        for (String node : group.dataNodes()) {
          admin.create().creatingParentsIfNeeded().forPath(node, FencedWrites.bytes(0));
        }
      }
    } catch (InterruptedException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("could not create the data nodes", e);
    }
  }

  private void awaitReady() {
    Awaitility.await("every worker ready")
        .atMost(READY)
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              for (Workers.Worker worker : workers.all()) {
                if (!worker.child().alive()) {
                  throw new IllegalStateException(
                      worker.describe() + " exited early; see " + worker.child().log());
                }
              }
              return workers.all().stream().allMatch(w -> history.live(w.number()).has("ready"));
            });
  }

  /** Waits until every group has granted since {@code after}. */
  private void awaitGranting(long after, Duration atMost) {
    Awaitility.await("every group granting")
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(50))
        .until(() -> groups.keySet().stream().allMatch(g -> lastGrant(g) > after));
  }

  private long lastGrant(String group) {
    return workers.all().stream()
        .filter(w -> w.group().name().equals(group))
        .mapToLong(w -> history.live(w.number()).lastGrantAt())
        .max()
        .orElse(0);
  }

  /** After faults healed at {@code healedAt}: waits, at most the bound and a bit, for grants. */
  private void recovered(long healedAt) {
    try {
      awaitGranting(healedAt, Duration.ofMillis(Bounds.BOUND_MS + 2_000));
    } catch (ConditionTimeoutException e) {
      log("not every group granted within the bound after a heal (the checks will say)");
    }
  }

  private void awaitEveryWorkerGranted(long lastHeal) {
    try {
      Awaitility.await("every worker granted since the last heal")
          .atMost(Duration.ofMillis(Bounds.BOUND_MS + 2_000))
          .pollInterval(Duration.ofMillis(50))
          .until(
              () ->
                  workers.alive().stream()
                      .allMatch(w -> history.live(w.number()).lastGrantAt() > lastHeal));
    } catch (ConditionTimeoutException e) {
      log("not every worker granted since the last heal (the checks will say)");
    }
  }

  private void checkWorkersAlive() {
    Map<Integer, Long> deaths = workers.deaths();
    for (Workers.Worker worker : workers.all()) {
      if (!deaths.containsKey(worker.number()) && !worker.child().alive()) {
        findings.violation(
            "worker died",
            worker.describe()
                + " exited with "
                + worker.child().process().exitValue()
                + "; see "
                + worker.child().log());
      }
    }
  }

  private void quiesce() {
    List<Workers.Worker> alive = workers.alive();
    for (Workers.Worker worker : alive) {
      try {
        hub.command(worker.number(), "quiesce");
      } catch (RuntimeException e) {
        findings.violation("quiesce", worker.describe() + " could not be told: " + e);
      }
    }
    try {
      Awaitility.await("every worker quiet")
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(50))
          .until(() -> alive.stream().allMatch(w -> history.live(w.number()).has("quiet")));
    } catch (ConditionTimeoutException e) {
      alive.stream()
          .filter(w -> !history.live(w.number()).has("quiet"))
          .forEach(
              w ->
                  findings.violation(
                      "quiesce",
                      w.describe() + " did not finish its operations within 30 s of being told"));
    }
  }

  /** With the workers quiet and connected: no ephemeral node, no watch under the root. */
  private void checkNothingLeft() {
    try {
      Awaitility.await("nothing left under " + ClientVariant.ROOT)
          .atMost(Duration.ofSeconds(15))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> leftovers().isEmpty());
    } catch (ConditionTimeoutException e) {
      leftovers().forEach(left -> findings.violation("leftover", left));
    }
  }

  private List<String> leftovers() {
    List<String> found = new ArrayList<>();
    for (ZkServers.Server server : servers.servers()) {
      String dump = ZkServers.fourLetter(server, "dump", 2_000);
      NodeWatcher.parse(dump, ClientVariant.ROOT + "/")
          .forEach(
              (path, session) ->
                  found.add(
                      server.name()
                          + ": ephemeral node "
                          + path
                          + " of session 0x"
                          + Long.toHexString(session)));
      new ServerStats("127.0.0.1", server.clientPort())
          .watchesByPath()
          .forEach(
              (path, sessions) -> {
                if (path.startsWith(ClientVariant.ROOT + "/")) {
                  found.add(server.name() + ": watch on " + path + " by " + sessions);
                }
              });
    }
    return found;
  }

  private void stop() {
    List<Workers.Worker> alive = workers.alive();
    for (Workers.Worker worker : alive) {
      try {
        hub.command(worker.number(), "stop");
      } catch (RuntimeException e) {
        findings.violation("stop", worker.describe() + " could not be told: " + e);
      }
    }
    try {
      Awaitility.await("every worker exited")
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> alive.stream().noneMatch(w -> w.child().alive()));
    } catch (ConditionTimeoutException e) {
      alive.stream()
          .filter(w -> w.child().alive())
          .forEach(w -> findings.violation("stop", w.describe() + " did not exit within 20 s"));
    }
  }

  private Map<Integer, String> workerGroups() {
    Map<Integer, String> byWorker = new HashMap<>();
    workers.all().forEach(w -> byWorker.put(w.number(), w.group().name()));
    return byWorker;
  }

  private void log(String line) {
    System.out.printf("[%s] %s%n", config.name(), line);
  }

  @Override
  public void close() throws IOException {
    if (watcher != null) {
      watcher.close();
    }
    if (hub != null) {
      hub.close();
    }
    if (servers != null) {
      servers.close();
    }
    if (children != null) {
      children.close();
    }
  }
}

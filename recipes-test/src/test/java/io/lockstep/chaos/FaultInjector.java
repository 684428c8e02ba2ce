package io.lockstep.chaos;

import io.lockstep.testing.ServerStats;
import io.lockstep.testing.TcpProxy;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Injects faults at seeded random moments: kills and restarts a server (sometimes the leader),
 * expires a client's session, cuts a client off from the whole ensemble (with resets, or silently)
 * and heals it, slows a client's links. At most one server is down and at most two clients are cut
 * off at a time, so the ensemble keeps a quorum and most clients keep working.
 */
final class FaultInjector implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(FaultInjector.class);

  private final ChaosRun run;
  private final Random random;
  private final ScheduledExecutorService healer = Executors.newSingleThreadScheduledExecutor();
  private final AtomicReference<InstanceSpec> downServer = new AtomicReference<>();
  private final java.util.Set<Integer> cutOff = java.util.concurrent.ConcurrentHashMap.newKeySet();

  FaultInjector(ChaosRun run, Random random) {
    this.run = run;
    this.random = random;
  }

  @Override
  public void run() {
    try {
      while (!run.stopping.get()) {
        TimeUnit.MILLISECONDS.sleep(1_500 + random.nextInt(2_500)); // the schedule's pacing
        if (!run.stopping.get()) {
          inject();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      run.tally.violation("fault injection failed: " + e);
    }
  }

  private void inject() throws Exception {
    int pick = random.nextInt(11);
    if (pick < 3) {
      killServer(pick == 0);
    } else if (pick < 5) {
      expireSession(randomClient());
    } else if (pick < 7) {
      partition(randomClient(), true);
    } else if (pick < 9) {
      partition(randomClient(), false);
    } else {
      slowDown(randomClient());
    }
  }

  /**
   * A client to hit: three times in four one that holds a lock right now (in slow work, if any
   * client is), when there is one, since a fault that lands on a holder is the one that tests loss
   * and fencing.
   */
  private ChaosRun.Client randomClient() {
    List<ChaosRun.Client> slow =
        run.clients.stream().filter(client -> !client.slowHolds.isEmpty()).toList();
    List<ChaosRun.Client> holding =
        run.clients.stream().filter(client -> !client.currentHolds.isEmpty()).toList();
    List<ChaosRun.Client> targets = slow.isEmpty() ? holding : slow;
    if (!targets.isEmpty() && random.nextInt(4) != 0) {
      return targets.get(random.nextInt(targets.size()));
    }
    return run.clients.get(random.nextInt(run.clients.size()));
  }

  private void killServer(boolean leader) throws Exception {
    List<InstanceSpec> instances = List.copyOf(run.cluster().getInstances());
    InstanceSpec victim =
        leader ? leaderOf(instances) : instances.get(random.nextInt(instances.size()));
    if (victim == null || !downServer.compareAndSet(null, victim)) {
      return;
    }
    log.info("chaos: killing server {}{}", victim.getPort(), leader ? " (leader)" : "");
    run.cluster().killServer(victim);
    run.tally.serverKills.increment();
    if (leader) {
      run.tally.leaderKills.increment();
    }
    later(1_000 + random.nextInt(4_000), this::restartDownServer);
  }

  private static InstanceSpec leaderOf(List<InstanceSpec> instances) {
    for (InstanceSpec instance : instances) {
      try {
        if (new ServerStats("127.0.0.1", instance.getPort())
            .command("srvr")
            .contains("Mode: leader")) {
          return instance;
        }
      } catch (RuntimeException e) {
        // not answering: not the leader we are looking for
      }
    }
    return null;
  }

  private void restartDownServer() {
    InstanceSpec victim = downServer.get();
    if (victim == null) {
      return;
    }
    try {
      run.cluster().restartServer(victim);
      log.info("chaos: restarted server {}", victim.getPort());
    } catch (Exception e) {
      run.tally.violation("could not restart server " + victim.getPort() + ": " + e);
    } finally {
      downServer.set(null);
    }
  }

  /**
   * Expires the client's session on the server, as a long pause would: a second handle attaches to
   * the session and closes it. The client's holds end now in the history: it cannot be told in
   * time, and fencing is what must protect the resource from its late writes.
   */
  private void expireSession(ChaosRun.Client client) throws Exception {
    CuratorFramework curator = client.curator;
    ZooKeeper victim = curator.getZookeeperClient().getZooKeeper();
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper killer =
        new ZooKeeper(
            run.cluster().getConnectString(),
            ChaosRun.SESSION_TIMEOUT_MS,
            event -> {
              if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
              }
            },
            victim.getSessionId(),
            victim.getSessionPasswd());
    try {
      if (connected.await(10, TimeUnit.SECONDS)) {
        Workload.expired(client, run.history);
        log.info("chaos: expiring session of client {}", client.id);
        run.tally.sessionExpiries.increment();
      }
    } finally {
      killer.close();
    }
  }

  private void partition(ChaosRun.Client client, boolean withResets) {
    if (cutOff.size() >= 2 || !cutOff.add(client.id)) {
      return;
    }
    log.info("chaos: cutting client {} off ({})", client.id, withResets ? "resets" : "silent");
    for (TcpProxy proxy : client.proxies) {
      if (withResets) {
        proxy.cut();
      } else {
        proxy.blackhole();
      }
    }
    (withResets ? run.tally.partitionsCut : run.tally.partitionsSilent).increment();
    // Half the partitions end within the session timeout (the session survives), half outlast it
    // (the session expires on the server and the lock passes to a waiter).
    long lengthMs =
        random.nextBoolean()
            ? 1_000 + random.nextInt(3_000)
            : ChaosRun.SESSION_TIMEOUT_MS + 1_000 + random.nextInt(4_000);
    later(
        lengthMs,
        () -> {
          client.proxies.forEach(TcpProxy::heal);
          cutOff.remove(client.id);
          log.info("chaos: healed client {}", client.id);
        });
  }

  private void slowDown(ChaosRun.Client client) {
    long latency = 20 + random.nextInt(130);
    client.proxies.forEach(proxy -> proxy.setLatency(latency));
    run.tally.slowLinks.increment();
    later(
        2_000 + random.nextInt(4_000), () -> client.proxies.forEach(proxy -> proxy.setLatency(0)));
  }

  private void later(long delayMs, Runnable action) {
    var unused = healer.schedule(action, delayMs, TimeUnit.MILLISECONDS);
  }

  /** Stops the schedule and undoes every fault still in force. */
  void healEverything() throws InterruptedException {
    healer.shutdownNow();
    healer.awaitTermination(30, TimeUnit.SECONDS);
    restartDownServer();
    for (ChaosRun.Client client : run.clients) {
      client.proxies.forEach(
          proxy -> {
            proxy.heal();
            proxy.setLatency(0);
          });
    }
    cutOff.clear();
  }
}

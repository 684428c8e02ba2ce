package io.lockstep.demo;

import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.utils.CloseableUtils;

/**
 * The ZooKeeper ensemble the demo runs against: an embedded three-server cluster it starts and
 * stops itself (and may kill servers of), or a real one it only connects to.
 */
final class Ensemble implements AutoCloseable {
  /** Session timeout of every demo client: long enough to ride out a server failover. */
  static final int SESSION_TIMEOUT_MS = 15_000;

  private final String connectString;
  private final TestingCluster cluster; // null for an external ensemble
  private final boolean owned;

  private Ensemble(String connectString, TestingCluster cluster, boolean owned) {
    this.connectString = connectString;
    this.cluster = cluster;
    this.owned = owned;
  }

  /** Starts a three-server ensemble on local ports; {@link #close()} stops it. */
  static Ensemble embedded() throws Exception {
    System.setProperty("zookeeper.4lw.commands.whitelist", "*");
    System.setProperty("zookeeper.admin.enableServer", "false");
    TestingCluster cluster = new TestingCluster(3);
    try {
      cluster.start();
    } catch (Exception e) {
      CloseableUtils.closeQuietly(cluster);
      throw e;
    }
    return new Ensemble(cluster.getConnectString(), cluster, true);
  }

  /** Uses a running cluster that someone else stops (tests share one). */
  static Ensemble of(TestingCluster cluster) {
    return new Ensemble(cluster.getConnectString(), cluster, false);
  }

  /** Connects to an ensemble that runs elsewhere; servers cannot be killed. */
  static Ensemble external(String connectString) {
    return new Ensemble(connectString, null, false);
  }

  String connectString() {
    return connectString;
  }

  /** Whether the demo may kill and restart servers (only its own). */
  boolean canKillServers() {
    return cluster != null;
  }

  /** How to describe the ensemble in the report. */
  String description() {
    return canKillServers() ? "embedded 3-server ensemble" : "ensemble " + connectString;
  }

  /**
   * A started client with its own session, connected.
   *
   * @throws IllegalStateException if it cannot connect within the session timeout
   */
  CuratorFramework newClient() throws InterruptedException {
    CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString(connectString)
            .sessionTimeoutMs(SESSION_TIMEOUT_MS)
            .connectionTimeoutMs(5_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 8, 2_000))
            .build();
    client.start();
    if (!client.blockUntilConnected(SESSION_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
      client.close();
      throw new IllegalStateException("could not connect to ZooKeeper at " + connectString);
    }
    return client;
  }

  /** The embedded server {@code client} is connected to, if it is one of ours. */
  Optional<InstanceSpec> serverOf(CuratorFramework client) throws Exception {
    if (cluster == null) {
      return Optional.empty();
    }
    return Optional.ofNullable(
        cluster.findConnectionInstance(client.getZookeeperClient().getZooKeeper()));
  }

  void kill(InstanceSpec server) throws Exception {
    var unused = cluster.killServer(server);
  }

  void restart(InstanceSpec server) throws Exception {
    var unused = cluster.restartServer(server);
  }

  @Override
  public void close() throws IOException {
    if (owned) {
      cluster.close();
    }
  }
}

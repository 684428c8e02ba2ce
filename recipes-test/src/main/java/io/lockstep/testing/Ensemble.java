package io.lockstep.testing;

import io.lockstep.testkit.internal.ServerStats;
import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.utils.CloseableUtils;

/**
 * A ZooKeeper ensemble and the clients of it: an embedded cluster started and stopped here (whose
 * servers may be killed), a running embedded cluster someone else stops, or a real ensemble that is
 * only connected to. Used by the demo and the chaos run.
 */
public final class Ensemble implements Closeable {
  /**
   * How clients of the ensemble are built.
   *
   * @param sessionTimeoutMs the session timeout asked of the server
   * @param connectionTimeoutMs how long one connection attempt may take
   * @param retryBaseMs the first sleep of the exponential backoff retry policy
   * @param maxRetries the retries of that policy
   * @param maxRetrySleepMs its longest sleep
   */
  public record ClientSettings(
      int sessionTimeoutMs,
      int connectionTimeoutMs,
      int retryBaseMs,
      int maxRetries,
      int maxRetrySleepMs) {
    /** The demo's clients: a session long enough to ride out a server failover. */
    public static final ClientSettings DEMO = new ClientSettings(15_000, 5_000, 100, 8, 2_000);
  }

  private final String connectString;
  private final TestingCluster cluster; // null for an external ensemble
  private final boolean owned;
  private final ClientSettings settings;

  private Ensemble(
      String connectString, TestingCluster cluster, boolean owned, ClientSettings settings) {
    this.connectString = connectString;
    this.cluster = cluster;
    this.owned = owned;
    this.settings = settings;
  }

  /** Starts an embedded ensemble of {@code servers} servers on local ports; close() stops it. */
  public static Ensemble embedded(int servers, ClientSettings settings) throws Exception {
    System.setProperty("zookeeper.4lw.commands.whitelist", "*");
    System.setProperty("zookeeper.admin.enableServer", "false");
    TestingCluster cluster = new TestingCluster(servers);
    try {
      cluster.start();
    } catch (Exception e) {
      CloseableUtils.closeQuietly(cluster);
      throw e;
    }
    return new Ensemble(cluster.getConnectString(), cluster, true, settings);
  }

  /** Uses a running cluster that someone else stops (tests share one); demo client settings. */
  public static Ensemble of(TestingCluster cluster) {
    return new Ensemble(cluster.getConnectString(), cluster, false, ClientSettings.DEMO);
  }

  /** Connects to an ensemble that runs elsewhere; servers cannot be killed. */
  public static Ensemble external(String connectString) {
    return new Ensemble(connectString, null, false, ClientSettings.DEMO);
  }

  public String connectString() {
    return connectString;
  }

  public ClientSettings settings() {
    return settings;
  }

  /** Whether servers may be killed and restarted (only those of an embedded ensemble). */
  public boolean canKillServers() {
    return cluster != null;
  }

  /** How to describe the ensemble in a report. */
  public String description() {
    return canKillServers()
        ? "embedded " + cluster.getInstances().size() + "-server ensemble"
        : "ensemble " + connectString;
  }

  /** The servers of an embedded ensemble; empty for an external one. */
  public List<InstanceSpec> servers() {
    return cluster == null ? List.of() : List.copyOf(cluster.getInstances());
  }

  /**
   * A started client with its own session, connected.
   *
   * @throws IllegalStateException if it cannot connect within the session timeout
   */
  public CuratorFramework newClient() throws InterruptedException {
    return newClient(connectString);
  }

  /**
   * A started client of the servers at {@code connectString} (this ensemble's, or proxies to it),
   * connected.
   *
   * @throws IllegalStateException if it cannot connect within the session timeout
   */
  public CuratorFramework newClient(String connectString) throws InterruptedException {
    CuratorFramework client = startClient(connectString);
    if (!client.blockUntilConnected(settings.sessionTimeoutMs(), TimeUnit.MILLISECONDS)) {
      client.close();
      throw new IllegalStateException("could not connect to ZooKeeper at " + connectString);
    }
    return client;
  }

  /**
   * A started client of the servers at {@code connectString} that may not be connected yet: its
   * first connect goes on in the background, as after a plain {@code client.start()}.
   */
  public CuratorFramework startClient(String connectString) {
    CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString(connectString)
            .sessionTimeoutMs(settings.sessionTimeoutMs())
            .connectionTimeoutMs(settings.connectionTimeoutMs())
            .retryPolicy(
                new ExponentialBackoffRetry(
                    settings.retryBaseMs(), settings.maxRetries(), settings.maxRetrySleepMs()))
            .build();
    client.start();
    return client;
  }

  /** The embedded server {@code client} is connected to, if it is one of ours. */
  public Optional<InstanceSpec> serverOf(CuratorFramework client) throws Exception {
    if (cluster == null) {
      return Optional.empty();
    }
    return Optional.ofNullable(
        cluster.findConnectionInstance(client.getZookeeperClient().getZooKeeper()));
  }

  /** The embedded server that leads the ensemble now, if one answers as leader. */
  public Optional<InstanceSpec> leader() {
    for (InstanceSpec server : servers()) {
      try {
        if (new ServerStats("127.0.0.1", server.getPort())
            .command("srvr")
            .contains("Mode: leader")) {
          return Optional.of(server);
        }
      } catch (RuntimeException notAnswering) {
        // down or electing: not the leader we are looking for
      }
    }
    return Optional.empty();
  }

  /** Kills an embedded server (its clients fail over to the others). */
  public void kill(InstanceSpec server) throws Exception {
    requireEmbedded();
    var unused = cluster.killServer(server);
  }

  /** Restarts an embedded server killed before. */
  public void restart(InstanceSpec server) throws Exception {
    requireEmbedded();
    var unused = cluster.restartServer(server);
  }

  private void requireEmbedded() {
    if (cluster == null) {
      throw new IllegalStateException("the servers of " + connectString + " are not ours");
    }
  }

  @Override
  public void close() throws IOException {
    if (owned) {
      cluster.close();
    }
  }
}

package io.lockstep.bench;

import java.util.Collection;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;

/** The embedded ZooKeeper server and the clients every benchmark uses. */
public final class BenchZooKeeper {
  /** The system property that points the JMH benchmarks at the suite's server. */
  public static final String CONNECT_PROPERTY = "lockstep.bench.connect";

  private BenchZooKeeper() {}

  /**
   * Starts an embedded server with its four-letter commands open (the benchmarks read {@code mntr})
   * and its admin server off. The server keeps ZooKeeper's defaults otherwise: every write is
   * fsynced to its log, as in production.
   */
  public static TestingServer startServer() throws Exception {
    System.setProperty("zookeeper.4lw.commands.whitelist", "*");
    System.setProperty("zookeeper.admin.enableServer", "false");
    return new TestingServer(true);
  }

  /**
   * A started, connected client without Curator's ensemble tracker (whose background {@code
   * getConfig} would blur request counts).
   */
  public static CuratorFramework newClient(String connectString) {
    CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString(connectString)
            .sessionTimeoutMs(60_000)
            .connectionTimeoutMs(15_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .ensembleTracker(false)
            .build();
    client.start();
    try {
      if (!client.blockUntilConnected(15, TimeUnit.SECONDS)) {
        client.close();
        throw new IllegalStateException("no connection to " + connectString);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      client.close();
      throw new IllegalStateException("interrupted while connecting", e);
    }
    return client;
  }

  /**
   * Creates the given directories, and their parents, as persistent nodes. Lock recipes create
   * missing directories as containers, which the server reaps once empty; a benchmark that let that
   * happen between cycles would count the re-creation too.
   */
  public static void createDirectories(CuratorFramework client, Collection<String> paths)
      throws Exception {
    for (String path : paths) {
      try {
        client.create().creatingParentsIfNeeded().forPath(path);
      } catch (KeeperException.NodeExistsException alreadyThere) {
        // created by an earlier row: fine
      }
    }
  }
}

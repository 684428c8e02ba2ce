package io.lockstep.bench;

import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.CloseableUtils;

/**
 * What a JMH benchmark trial needs: a client of the suite's server (named by the system property
 * {@value BenchZooKeeper#CONNECT_PROPERTY}), or of a server of its own when run outside the suite,
 * and a lock on a fresh path whose directories exist.
 */
final class BenchFixture implements AutoCloseable {
  private static final AtomicInteger trials = new AtomicInteger();

  private final TestingServer ownServer;
  private final CuratorFramework client;

  private BenchFixture(TestingServer ownServer, CuratorFramework client) {
    this.ownServer = ownServer;
    this.client = client;
  }

  static BenchFixture open() throws Exception {
    String connect = System.getProperty(BenchZooKeeper.CONNECT_PROPERTY, "");
    TestingServer server = null;
    if (connect.isBlank()) {
      server = BenchZooKeeper.startServer();
      connect = server.getConnectString();
    }
    return new BenchFixture(server, BenchZooKeeper.newClient(connect));
  }

  /** A new lock of {@code recipe} on a path of its own, its directories created. */
  InterProcessLock newLock(Library library, Recipe recipe, int paths) throws Exception {
    String path =
        "/bench/jmh-"
            + ProcessHandle.current().pid()
            + "-"
            + trials.incrementAndGet()
            + "-"
            + recipe.name().toLowerCase(Locale.ROOT);
    BenchZooKeeper.createDirectories(client, recipe.directories(library, path, paths));
    return recipe.newLock(library, client, path, paths);
  }

  @Override
  public void close() {
    CloseableUtils.closeQuietly(client);
    if (ownServer != null) {
      CloseableUtils.closeQuietly(ownServer);
    }
  }
}

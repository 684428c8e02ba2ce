package io.lockstep.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testkit.internal.ServerStats;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.CloseableUtils;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real ZooKeeper server for a test class, clients for each test, and the invariants every test
 * must leave true: no ephemeral node and no watch left on the server, checked while the test's
 * clients are still connected (closing a session would hide a leak).
 *
 * <p>Register it as a static field with {@code @RegisterExtension}. Each test gets a fresh root
 * path ({@link #path(String)}); clients made with {@link #newClient()} are closed after the checks.
 */
public final class ZooKeeperExtension
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
  private static final AtomicInteger testNumber = new AtomicInteger();

  private final List<CuratorFramework> clients = new CopyOnWriteArrayList<>();
  private TestingServer server;
  private String root;
  private boolean checkLeaks = true;
  private TcpProxy proxy; // the current test's, made at its first proxy(); guarded by this

  static {
    System.setProperty("zookeeper.4lw.commands.whitelist", "*");
    System.setProperty("zookeeper.admin.enableServer", "false");
    // Reap empty lock directories (container nodes) within a second, so tests see it happen.
    System.setProperty("znode.container.checkIntervalMs", "500");
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    server = new TestingServer(true);
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    CloseableUtils.closeQuietly(server);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    root = "/t" + testNumber.incrementAndGet();
    checkLeaks = true;
  }

  @Override
  public void afterEach(ExtensionContext context) {
    try {
      closeProxy(); // first, as a test's own @AfterEach would
      if (checkLeaks && context.getExecutionException().isEmpty()) {
        assertNothingLeft();
      }
    } finally {
      clients.forEach(CloseableUtils::closeQuietly);
      clients.clear();
    }
  }

  /**
   * A TCP proxy in front of the server for the current test, made at the first call; closed after
   * the test, before the leak check.
   */
  public synchronized TcpProxy proxy() {
    if (proxy == null) {
      proxy = TcpProxy.start("127.0.0.1", server.getPort());
    }
    return proxy;
  }

  private synchronized void closeProxy() {
    if (proxy != null) {
      proxy.close();
      proxy = null;
    }
  }

  /** Skips the after-test leak check (for tests that deliberately kill servers or sessions). */
  public void skipLeakCheck() {
    checkLeaks = false;
  }

  /** Waits until the server holds no ephemeral node and no watch on a non-system path. */
  public void assertNothingLeft() {
    ServerStats stats = stats();
    await("no ephemeral node and no watch left")
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(stats.ephemeralNodes()).as("ephemeral nodes left").isEmpty();
              assertThat(userWatches(stats)).as("watches left").isEmpty();
            });
  }

  private static Map<String, List<String>> userWatches(ServerStats stats) {
    return stats.watchesByPath().entrySet().stream()
        .filter(e -> !e.getKey().startsWith("/zookeeper"))
        .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
  }

  /**
   * Packets the server has received from the client's session, read once the count has stopped
   * moving (so that nothing still in flight from earlier calls is counted later).
   */
  public long requestsSoFar(CuratorFramework client) throws Exception {
    long session = client.getZookeeperClient().getZooKeeper().getSessionId();
    java.util.concurrent.atomic.AtomicLong last = new java.util.concurrent.atomic.AtomicLong(-1);
    await("request count settles")
        .pollInterval(Duration.ofMillis(50))
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              long now = stats().packetsReceived(session);
              return now == last.getAndSet(now);
            });
    return last.get();
  }

  /**
   * Waits until no child watch is left on the server (the checks after each test cover data watches
   * and ephemeral nodes; a recipe that waits for a change of children arms child watches).
   */
  public void assertNoChildWatchLeft() {
    await("no child watch left")
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () -> {
              ServerStats stats = stats();
              long data = stats.watchesByPath().values().stream().mapToLong(List::size).sum();
              assertThat(stats.monitor("zk_watch_count") - data).isZero();
            });
  }

  /**
   * The children of a node, or none when the node is absent: lock directories are container nodes
   * the server reaps at any moment once empty, even between an {@code exists} and a read.
   */
  public static List<String> childrenOrNone(CuratorFramework client, String path) throws Exception {
    try {
      return client.getChildren().forPath(path);
    } catch (KeeperException.NoNodeException absent) {
      return List.of();
    }
  }

  /** A path under this test's own root. */
  public String path(String name) {
    return root + "/" + name;
  }

  public TestingServer server() {
    return server;
  }

  public ServerStats stats() {
    return ServerStats.of(server.getConnectString());
  }

  /**
   * A started client with a short retry policy and without Curator's ensemble tracker (whose
   * background reads would blur request counts); closed after the test.
   */
  public CuratorFramework newClient() {
    return newClient(builder -> {});
  }

  /** A started client, customised; closed after the test. */
  public CuratorFramework newClient(Consumer<CuratorFrameworkFactory.Builder> customize) {
    CuratorFrameworkFactory.Builder builder =
        CuratorFrameworkFactory.builder()
            .connectString(server.getConnectString())
            .sessionTimeoutMs(30_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            // no background getConfig after connecting: request counts stay exact
            .ensembleTracker(false);
    customize.accept(builder);
    CuratorFramework client = builder.build();
    client.start();
    try {
      if (!client.blockUntilConnected(10, java.util.concurrent.TimeUnit.SECONDS)) {
        throw new IllegalStateException("client did not connect");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    clients.add(client);
    return client;
  }

  /** Several clients, each with its own session. */
  public List<CuratorFramework> newClients(int count) {
    List<CuratorFramework> made = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      made.add(newClient());
    }
    return made;
  }
}

package io.lockstep.recipes.locks.roots;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.CloseableUtils;
import org.apache.zookeeper.KeeperException;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The clients of a test class at every {@link ClientRoot}, on the server of its {@link
 * ZooKeeperExtension}: a root client with neither chroot nor namespace, and two clients (two
 * sessions) per root, shared by the class's tests so that a test costs no connect and no close.
 *
 * <p>Register it as a static field after the extension, both with {@code @Order} (this one higher):
 * it connects once the server runs, and after each test, while the clients are still connected,
 * checks that no child watch is left (the extension's leak check, which comes next, sees ephemeral
 * nodes and data watches only). After a failed test it reconnects every client, so that what the
 * failure left on the server (nodes, watches) ends with the old sessions instead of failing the
 * leak checks of the tests that follow.
 */
final class RootClients
    implements BeforeAllCallback, AfterAllCallback, AfterTestExecutionCallback, AfterEachCallback {
  private final ZooKeeperExtension zk;
  private final List<CuratorFramework> opened = new ArrayList<>();
  private final Map<ClientRoot, List<CuratorFramework>> shared = new EnumMap<>(ClientRoot.class);
  private CuratorFramework root;

  RootClients(ZooKeeperExtension zk) {
    this.zk = zk;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    connect();
  }

  @Override
  public void afterTestExecution(ExtensionContext context) throws Exception {
    if (context.getExecutionException().isPresent()) {
      close();
      connect();
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    if (context.getExecutionException().isEmpty()) {
      assertNoChildWatchLeft();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    close();
  }

  /** The client with neither chroot nor namespace: it sees the server's own paths. */
  CuratorFramework root() {
    return root;
  }

  /** The first shared client of {@code clientRoot}, in the namespace {@link ClientRoot#NS}. */
  CuratorFramework first(ClientRoot clientRoot) {
    return shared.get(clientRoot).get(0);
  }

  /** The second shared client of {@code clientRoot}: another session. */
  CuratorFramework second(ClientRoot clientRoot) {
    return shared.get(clientRoot).get(1);
  }

  /**
   * A new client of {@code clientRoot} in the namespace {@code ns}, closed after the test by the
   * extension: for a test that needs a namespace of its own.
   */
  CuratorFramework newClient(ClientRoot clientRoot, String ns) {
    return clientRoot.view(
        zk.newClient(builder -> clientRoot.configure(builder, zk.server().getConnectString(), ns)),
        ns);
  }

  /** The children of {@code serverPath}, as the root client reads them; none if it is missing. */
  List<String> children(String serverPath) throws Exception {
    try {
      return root.getChildren().forPath(serverPath);
    } catch (KeeperException.NoNodeException none) {
      return List.of();
    }
  }

  /** Awaits a condition checked at once, then every 10 ms, for at most 10 s. */
  static ConditionFactory soon(String alias) {
    return await(alias)
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(10))
        .atMost(Duration.ofSeconds(10));
  }

  /** Waits until the server holds no child watch (the extension's check sees data watches only). */
  void assertNoChildWatchLeft() {
    soon("no child watch left")
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () -> {
              long all = zk.stats().monitor("zk_watch_count");
              long data = zk.stats().watchesByPath().values().stream().mapToLong(List::size).sum();
              assertThat(all - data).as("child watches").isZero();
            });
  }

  private void connect() throws Exception {
    root = start(builder -> builder.connectString(zk.server().getConnectString()));
    if (root.checkExists().forPath(ClientRoot.CHROOT_PATH) == null) {
      root.create().forPath(ClientRoot.CHROOT_PATH);
    }
    for (ClientRoot clientRoot : ClientRoot.values()) {
      shared.put(clientRoot, List.of(open(clientRoot), open(clientRoot)));
    }
  }

  private void close() {
    opened.forEach(CloseableUtils::closeQuietly);
    opened.clear();
    shared.clear();
  }

  private CuratorFramework open(ClientRoot clientRoot) throws InterruptedException {
    String connectString = zk.server().getConnectString();
    return clientRoot.view(
        start(builder -> clientRoot.configure(builder, connectString, ClientRoot.NS)),
        ClientRoot.NS);
  }

  /** A started, connected client with the extension's settings. */
  private CuratorFramework start(Consumer<CuratorFrameworkFactory.Builder> customize)
      throws InterruptedException {
    CuratorFrameworkFactory.Builder builder =
        CuratorFrameworkFactory.builder()
            .sessionTimeoutMs(30_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .ensembleTracker(false);
    customize.accept(builder);
    CuratorFramework client = builder.build();
    opened.add(client);
    client.start();
    if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
      throw new IllegalStateException("client did not connect");
    }
    return client;
  }
}

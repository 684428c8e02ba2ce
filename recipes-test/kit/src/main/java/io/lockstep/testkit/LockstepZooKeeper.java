package io.lockstep.testkit;

import io.lockstep.testkit.internal.Links;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.CloseableUtils;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A JUnit 5 extension that runs a real, embedded ZooKeeper (one server, or an ensemble) for a test
 * class, hands out clients, lets the test break them ({@link #faults()}), and checks after each
 * test that the test's clients left no ephemeral node and no watch behind.
 *
 * <p><b>Lifecycle.</b> Register it on a static field: the servers start before the class's first
 * test and stop after its last. Clients made with {@link #newClient()} are started and connected,
 * each through a link of its own (a TCP proxy in this process that {@link LockFaults} can cut or
 * silence), and closed after their test. {@link #connectString()} is a link shared by the whole
 * class, for an application under test (a Spring Boot context) that builds its own client.
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.LockHold;
 * import io.lockstep.recipes.locks.ReentrantMutex;
 * import io.lockstep.testkit.LockstepZooKeeper;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * LockstepZooKeeper zk = LockstepZooKeeper.server(); // a static @RegisterExtension field
 * // in a test:
 * CuratorFramework client = zk.newClient();
 * LockHold hold = new ReentrantMutex(client, zk.path("report")).hold();
 * zk.faults().expireSessionOf(hold); // as a pause longer than the session timeout would
 * hold.whenLost().toCompletableFuture().join(); // the hold is LOST, as the code under test hears
 * }</pre>
 *
 * <p><b>Checks.</b> After a test that passed, the extension waits up to 10 seconds for the server
 * to hold no ephemeral node and no watch of the sessions of the test's own clients (an
 * application's client on {@link #connectString()} is not checked: its life is the application's),
 * and fails the test otherwise. {@link #skipLeftoverCheck()} turns the check off for one test.
 *
 * <p><b>Limits.</b> The servers are real ZooKeeper servers in this JVM (Curator's {@code
 * curator-test}), so faults are real: an expired session is expired on the server, a silenced link
 * drops bytes. Times follow the clients' own session and connection timeouts (by default 30 s and
 * 10 s for {@link #newClient()}; shorten them with {@link #newClient(Consumer)}).
 */
public final class LockstepZooKeeper
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
  private static final AtomicInteger testNumber = new AtomicInteger();

  static {
    System.setProperty("zookeeper.4lw.commands.whitelist", "*");
    System.setProperty("zookeeper.admin.enableServer", "false");
  }

  private final int servers;
  private final List<Client> clients = new CopyOnWriteArrayList<>();
  private final List<Links> links = new CopyOnWriteArrayList<>();
  private InstanceSpec serverSpec; // the one server's address, kept across restarts
  private TestingServer server; // one server, or
  private TestingCluster ensemble; // an ensemble
  private Links shared; // the application's link
  private CuratorFramework admin; // reads and deletes for faults and checks, on no link
  private LockFaults faults;
  private String root;
  private boolean checkLeftovers = true;
  Duration leftoverPatience = Leftovers.PATIENCE; // the kit's own test of a failing check: less

  /** A client the extension made, with its link, closed after the test. */
  record Client(CuratorFramework curator, Links link) {}

  private LockstepZooKeeper(int servers) {
    this.servers = servers;
  }

  /**
   * One embedded ZooKeeper server.
   *
   * @return a new extension; register it on a static field
   */
  public static LockstepZooKeeper server() {
    return new LockstepZooKeeper(1);
  }

  /**
   * An embedded ensemble of {@code servers} ZooKeeper servers.
   *
   * @param servers how many servers, at least 3
   * @return a new extension; register it on a static field
   * @throws IllegalArgumentException if {@code servers} is below 3
   */
  public static LockstepZooKeeper ensemble(int servers) {
    if (servers < 3) {
      throw new IllegalArgumentException("servers must be at least 3: " + servers);
    }
    return new LockstepZooKeeper(servers);
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    if (servers == 1) {
      serverSpec = InstanceSpec.newInstanceSpec();
      server = new TestingServer(serverSpec, true);
    } else {
      ensemble = new TestingCluster(servers);
      ensemble.start();
    }
    shared = newLinks();
    admin =
        start(
            CuratorFrameworkFactory.builder()
                .connectString(serverConnectString())
                .retryPolicy(new ExponentialBackoffRetry(100, 10)));
    faults = new LockFaults(this);
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    CloseableUtils.closeQuietly(admin);
    links.forEach(Links::close);
    links.clear();
    CloseableUtils.closeQuietly(server);
    CloseableUtils.closeQuietly(ensemble);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    root = "/lockstep-test-" + testNumber.incrementAndGet();
    checkLeftovers = true;
  }

  @Override
  public void afterEach(ExtensionContext context) {
    try {
      faults.healAll();
      if (checkLeftovers && context.getExecutionException().isEmpty()) {
        assertNothingLeft();
      }
    } finally {
      for (Client client : clients) {
        CloseableUtils.closeQuietly(client.curator());
        client.link().close();
        links.remove(client.link());
      }
      clients.clear();
    }
  }

  /**
   * A started, connected client through a link of its own; closed after the test. Its session
   * timeout is 30 s, its connection timeout 10 s, its retry policy three tries from 100 ms.
   *
   * @return the client
   * @throws IllegalStateException if it did not connect within 10 seconds
   */
  public CuratorFramework newClient() {
    return newClient(builder -> {});
  }

  /**
   * As {@link #newClient()}, with the builder customised first (a namespace, timeouts, a retry
   * policy); the connect string is the extension's.
   *
   * @param customize changes the builder
   * @return the client
   * @throws NullPointerException if {@code customize} is null
   * @throws IllegalStateException if it did not connect within 10 seconds
   */
  public CuratorFramework newClient(Consumer<CuratorFrameworkFactory.Builder> customize) {
    Objects.requireNonNull(customize, "customize");
    Links link = newLinks();
    CuratorFrameworkFactory.Builder builder =
        CuratorFrameworkFactory.builder()
            .sessionTimeoutMs(30_000)
            .connectionTimeoutMs(10_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3));
    customize.accept(builder);
    CuratorFramework client = start(builder.connectString(link.connectString()));
    clients.add(new Client(client, link));
    return client;
  }

  /**
   * The connect string of the link this test class shares with an application under test, the same
   * for every test of the class: give it to the application's client ({@code
   * lockstep.zookeeper.connect-string} for Spring Boot, see {@link #springProperties()}). {@link
   * LockFaults} cuts it for every client connected through it.
   *
   * @return the connect string
   */
  public String connectString() {
    return shared.connectString();
  }

  /**
   * The Spring Boot properties that point Lockstep's auto-configured client at this ZooKeeper:
   * {@code lockstep.zookeeper.connect-string}, set to {@link #connectString()}. Register them with
   * {@code @DynamicPropertySource}.
   *
   * @return the properties
   */
  public Map<String, String> springProperties() {
    return Map.of("lockstep.zookeeper.connect-string", connectString());
  }

  /**
   * A path under this test's own root, so that tests never share a lock.
   *
   * @param name the lock's name, without a leading slash
   * @return {@code /lockstep-test-<n>/<name>}
   */
  public String path(String name) {
    return root + "/" + name;
  }

  /**
   * The faults to inject into this ZooKeeper and its clients.
   *
   * @return the faults
   */
  public LockFaults faults() {
    return faults;
  }

  /** Turns the after-test check of ephemeral nodes and watches off for the current test. */
  public void skipLeftoverCheck() {
    checkLeftovers = false;
  }

  /**
   * Waits up to 10 seconds until the server holds no ephemeral node and no watch of a session of
   * this test's clients.
   *
   * @throws AssertionError naming what was left, if something still is
   */
  public void assertNothingLeft() {
    Leftovers.assertNone(admin, clients, memberConnectStrings(), leftoverPatience);
  }

  // ---- for LockFaults ----

  /** The servers' own connect string, on no link. */
  String serverConnectString() {
    return server != null ? server.getConnectString() : ensemble.getConnectString();
  }

  List<String> memberConnectStrings() {
    return servers().stream().map(spec -> "127.0.0.1:" + spec.getPort()).toList();
  }

  List<InstanceSpec> servers() {
    return server != null ? List.of(serverSpec) : List.copyOf(ensemble.getInstances());
  }

  CuratorFramework admin() {
    return admin;
  }

  /** The links a client talks through: its own, or the shared one. */
  Links linkOf(CuratorFramework client) {
    for (Client made : clients) {
      if (made.curator() == client) {
        return made.link();
      }
    }
    String connected = client.getZookeeperClient().getCurrentConnectionString();
    for (Links link : links) {
      if (link.carries(connected)) {
        return link;
      }
    }
    throw new IllegalArgumentException(
        "client does not talk to this ZooKeeper through one of its links: " + connected);
  }

  List<Links> allLinks() {
    return List.copyOf(links);
  }

  void restartServers() throws Exception {
    if (server != null) {
      server.restart();
      return;
    }
    for (InstanceSpec member : ensemble.getInstances()) {
      ensemble.killServer(member);
      ensemble.restartServer(member);
    }
  }

  private Links newLinks() {
    Links link = Links.to(servers());
    links.add(link);
    return link;
  }

  private static CuratorFramework start(CuratorFrameworkFactory.Builder builder) {
    CuratorFramework client = builder.ensembleTracker(false).build();
    client.start();
    try {
      if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
        client.close();
        throw new IllegalStateException("client did not connect within 10 seconds");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      client.close();
      throw new IllegalStateException("interrupted while connecting", e);
    }
    return client;
  }
}

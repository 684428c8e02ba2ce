package io.lockstep.recipes.locks;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code LockInspector}'s command: every lock under a root, as a table or as JSON, exit codes. */
@Timeout(60)
class InspectorCommandTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final byte[] BINARY = {0, 1, 2, (byte) 0xff, (byte) 0xfe};
  private static final String QUOTED = "say \"hi\" \\ to caf\u00e9 \u2603";

  /** What a run printed, and its exit code. */
  record Run(int exit, String out, String err) {}

  static Run run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        InspectorCommand.run(
            args, new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8));
    return new Run(exit, out.toString(UTF_8), err.toString(UTF_8));
  }

  @Test
  void everyLockUnderTheRoot_isListed_withHoldersWaitersSessionsAndData() throws Exception {
    CuratorFramework holderClient = zk.newClient(b -> b.defaultData(QUOTED.getBytes(UTF_8)));
    CuratorFramework binaryClient = zk.newClient(b -> b.defaultData(BINARY));
    ReentrantMutex orders = new ReentrantMutex(holderClient, zk.path("locks/orders"));
    InterProcessMutex curatorWaiter =
        new InterProcessMutex(zk.newClient(), zk.path("locks/orders"));
    KeyedLocks nested = new KeyedLocks(binaryClient, zk.path("locks/orders/by-key"));
    InterProcessMutex curatorHolder = new InterProcessMutex(zk.newClient(), zk.path("locks/a/b/c"));
    orders.acquire();
    nested.mutex("17").acquire();
    curatorHolder.acquire();
    try (LockThread thread = new LockThread("curator waiter")) {
      CompletableFuture<Boolean> waiting =
          thread.call(() -> curatorWaiter.acquire(20, TimeUnit.SECONDS));
      LockInspector inspector = new LockInspector(zk.newClient());
      await().until(() -> inspector.inspect(zk.path("locks/orders")).waiters().size() == 1);

      Run text = run(zk.server().getConnectString(), zk.path("locks"));

      assertThat(text.exit()).isZero();
      assertThat(text.err()).isEmpty();
      assertThat(text.out())
          .startsWith("3 locks under " + zk.path("locks"))
          .contains(zk.path("locks/a/b/c") + ": 1 holder, 0 waiters")
          .contains(zk.path("locks/orders") + ": 1 holder, 1 waiter")
          .contains(zk.path("locks/orders/by-key/17") + ": 1 holder, 0 waiters")
          .contains("0x" + Long.toHexString(Sessions.id(holderClient)))
          .contains("say \"hi\" \\ to caf\u00e9")
          .contains("base64:" + Base64.getEncoder().encodeToString(BINARY));
      assertThat(text.out().lines().filter(line -> line.strip().startsWith("waiter")))
          .singleElement()
          .asString()
          .contains("MUTEX");
      assertThat(inspector.inspectTree(zk.path("locks")))
          .extracting(LockInspector.Snapshot::path)
          .containsExactly(
              zk.path("locks/a/b/c"), zk.path("locks/orders"), zk.path("locks/orders/by-key/17"));

      Run json = run(zk.server().getConnectString(), zk.path("locks"), "--json");

      assertThat(json.exit()).isZero();
      Map<?, ?> parsed = (Map<?, ?>) MiniJson.parse(json.out());
      assertThat(parsed.get("root")).isEqualTo(zk.path("locks"));
      List<?> locks = (List<?>) parsed.get("locks");
      assertThat(locks).hasSize(3);
      Map<?, ?> ordersLock = (Map<?, ?>) locks.get(1);
      assertThat(ordersLock.get("path")).isEqualTo(zk.path("locks/orders"));
      Map<?, ?> holder = (Map<?, ?>) ((List<?>) ordersLock.get("holders")).get(0);
      assertThat(holder.get("sessionId"))
          .isEqualTo("0x" + Long.toHexString(Sessions.id(holderClient)));
      assertThat(holder.get("mode")).isEqualTo("MUTEX");
      assertThat(holder.get("data")).isEqualTo(QUOTED);
      assertThat(holder.get("dataEncoding")).isEqualTo("utf-8");
      assertThat((Long) holder.get("ageMillis")).isNotNegative();
      assertThat((List<?>) ordersLock.get("waiters")).hasSize(1);
      Map<?, ?> binary = (Map<?, ?>) ((List<?>) ((Map<?, ?>) locks.get(2)).get("holders")).get(0);
      assertThat(binary.get("dataEncoding")).isEqualTo("base64");
      assertThat(Base64.getDecoder().decode((String) binary.get("data"))).isEqualTo(BINARY);

      orders.release();
      assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
      thread.run(curatorWaiter::release).get();
    } finally {
      nested.mutex("17").release();
      curatorHolder.release();
    }
    assertThat(run(zk.server().getConnectString(), zk.path("locks")).out())
        .startsWith("0 locks under ");
  }

  /** Regression: once the server reaped the idle {@code locks} container, only leases are left. */
  @Test
  void aSemaphoreWithItsLeasesAlone_isStillASemaphore() throws Exception {
    CuratorFramework client = zk.newClient();
    InterProcessSemaphoreV2 curator = new InterProcessSemaphoreV2(client, zk.path("s/rates"), 2);
    Lease lease = curator.acquire();
    try {
      await("the idle locks container is reaped")
          .until(() -> client.getChildren().forPath(zk.path("s/rates")).equals(List.of("leases")));

      List<LockInspector.Snapshot> locks = new LockInspector(client).inspectTree(zk.path("s"));

      assertThat(locks)
          .singleElement()
          .satisfies(lock -> assertThat(lock.path()).isEqualTo(zk.path("s/rates")))
          .satisfies(
              lock ->
                  assertThat(lock.holders())
                      .singleElement()
                      .extracting(LockInspector.Entry::mode)
                      .isEqualTo(LockInspector.Mode.LEASE));
    } finally {
      curator.returnLease(lease);
    }
  }

  @Test
  void badArguments_exitWith2_namingTheArgument() {
    assertThat(run()).satisfies(r -> assertBad(r, "<connect string> is missing"));
    assertThat(run("localhost:2181")).satisfies(r -> assertBad(r, "<root> is missing"));
    assertThat(run("localhost:2181", "locks")).satisfies(r -> assertBad(r, "<root> 'locks'"));
    assertThat(run("localhost:2181", "/locks", "--jsno"))
        .satisfies(r -> assertBad(r, "unknown option: --jsno"));
    assertThat(run("localhost:2181", "/locks", "--timeout", "soon"))
        .satisfies(r -> assertBad(r, "--timeout"));
    assertThat(run("localhost:2181", "/locks", "--namespace"))
        .satisfies(r -> assertBad(r, "--namespace needs a value"));
    assertThat(run("localhost:2181", "/locks", "/more"))
        .satisfies(r -> assertBad(r, "unexpected argument: /more"));
    Run help = run("--help");
    assertThat(help.exit()).isZero();
    assertThat(help.out()).startsWith("Usage: LockInspector <connect string> <root>");
  }

  private static void assertBad(Run run, String message) {
    assertThat(run.exit()).isEqualTo(2);
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).startsWith("LockInspector: " + message).contains("Usage:");
  }

  @Test
  void aBoundedWalk_reportsTheLocksItRead_andThatItStoppedShort() throws Exception {
    CuratorFramework client = zk.newClient();
    KeyedLocks keys = new KeyedLocks(client, zk.path("bounded"));
    List<ReentrantMutex> held = new ArrayList<>();
    for (String key : List.of("a", "b", "c")) {
      ReentrantMutex lock = keys.mutex(key);
      lock.acquire();
      held.add(lock);
    }
    LockInspector inspector = new LockInspector(zk.newClient());
    try {
      LockInspector.Tree whole = inspector.inspectTree(zk.path("bounded"), 4);
      LockInspector.Tree part = inspector.inspectTree(zk.path("bounded"), 2);

      assertThat(whole.complete()).as("the root and its three keys").isTrue();
      assertThat(whole.locks())
          .extracting(LockInspector.Snapshot::path)
          .containsExactly(zk.path("bounded/a"), zk.path("bounded/b"), zk.path("bounded/c"));
      assertThat(part.complete()).isFalse();
      assertThat(part.locks())
          .extracting(LockInspector.Snapshot::path)
          .containsExactly(zk.path("bounded/a"));
      assertThat(inspector.inspectTree(zk.path("bounded")))
          .extracting(LockInspector.Snapshot::path)
          .containsExactly(zk.path("bounded/a"), zk.path("bounded/b"), zk.path("bounded/c"));
      assertThatThrownBy(() -> inspector.inspectTree(zk.path("bounded"), 0))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("maxNodes");
    } finally {
      held.forEach(ReentrantMutex::release);
    }
  }

  @Test
  void anUnreachableServer_exitsWith1() throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }

    Run run = run("127.0.0.1:" + closedPort, "/locks", "--timeout", "1");

    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.err()).contains("could not reach ZooKeeper at 127.0.0.1:" + closedPort);
  }

  /** {@code main} in a JVM of its own, with the library and its runtime dependencies only. */
  @Test
  void main_runsStandalone_fromTheLibraryAndItsRuntimeDependencies() throws Exception {
    CuratorFramework holderClient = zk.newClient(b -> b.defaultData("standalone".getBytes(UTF_8)));
    ReentrantMutex lock = new ReentrantMutex(holderClient, zk.path("locks/report"));
    lock.acquire();
    try {
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.add("-cp");
      command.add(String.join(File.pathSeparator, runtimeClassPath()));
      command.add(LockInspector.class.getName());
      command.add(zk.server().getConnectString());
      command.add(zk.path("locks"));
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      String output = new String(process.getInputStream().readAllBytes(), UTF_8);
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();

      assertThat(process.exitValue()).as(output).isZero();
      assertThat(output)
          .contains(zk.path("locks/report") + ": 1 holder, 0 waiters")
          .contains("0x" + Long.toHexString(Sessions.id(holderClient)))
          .contains("standalone");
    } finally {
      lock.release();
    }
  }

  /**
   * {@code --json} in a JVM of its own with a Spring Boot application's logging on the class path:
   * logback and Spring Boot's console logging (its {@code defaults.xml} and {@code
   * console-appender.xml}, as Boot's {@code base.xml} has them, without the log file). Standard
   * output is the JSON alone; ZooKeeper's and Curator's logs went to standard error.
   */
  @Test
  void main_json_isJsonAloneOnStandardOutput_withSpringBootsConsoleLogging(@TempDir Path config)
      throws Exception {
    Files.writeString(
        config.resolve("logback.xml"),
        """
        <configuration>
          <include resource="org/springframework/boot/logging/logback/defaults.xml"/>
          <include resource="org/springframework/boot/logging/logback/console-appender.xml"/>
          <root level="INFO">
            <appender-ref ref="CONSOLE"/>
          </root>
        </configuration>
        """);
    List<String> classPath = new ArrayList<>(List.of(config.toString()));
    classPath.addAll(springBootLogging());

    String stderr = assertJsonAloneOnStandardOutput(classPath);

    assertThat(stderr).contains(" INFO ").contains("Session establishment complete");
  }

  /** The same with logback's own default configuration: every logger at DEBUG, to the console. */
  @Test
  void main_json_isJsonAloneOnStandardOutput_withLogbacksDefaultConfiguration() throws Exception {
    String stderr = assertJsonAloneOnStandardOutput(List.of());

    assertThat(stderr).contains(" DEBUG ").contains("Session establishment complete");
  }

  /**
   * Runs {@code main --json} with the library, its runtime dependencies, logback and {@code extra}
   * on the class path, on a lock held; checks that standard output parses as the JSON of that lock
   * and returns standard error.
   */
  private static String assertJsonAloneOnStandardOutput(List<String> extra) throws Exception {
    CuratorFramework holderClient = zk.newClient(b -> b.defaultData("json".getBytes(UTF_8)));
    ReentrantMutex lock = new ReentrantMutex(holderClient, zk.path("locks/report"));
    lock.acquire();
    try {
      List<String> classPath = new ArrayList<>(runtimeClassPath());
      classPath.addAll(logback());
      classPath.addAll(extra);
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.add("-cp");
      command.add(String.join(File.pathSeparator, classPath));
      command.add(LockInspector.class.getName());
      command.add(zk.server().getConnectString());
      command.add(zk.path("locks"));
      command.add("--json");
      Path stderrFile = Files.createTempFile("inspector", ".stderr");
      String stdout;
      String stderr;
      Process process;
      try {
        process = new ProcessBuilder(command).redirectError(stderrFile.toFile()).start();
        stdout = new String(process.getInputStream().readAllBytes(), UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        stderr = Files.readString(stderrFile, UTF_8);
      } finally {
        Files.delete(stderrFile);
      }

      assertThat(process.exitValue()).as(stderr).isZero();
      assertThat(stdout.lines()).as("standard output").hasSize(1);
      Map<?, ?> parsed = (Map<?, ?>) MiniJson.parse(stdout);
      List<?> locks = (List<?>) parsed.get("locks");
      assertThat(locks).hasSize(1);
      Map<?, ?> holder = (Map<?, ?>) ((List<?>) ((Map<?, ?>) locks.get(0)).get("holders")).get(0);
      assertThat(holder.get("sessionId"))
          .isEqualTo("0x" + Long.toHexString(Sessions.id(holderClient)));
      assertThat(holder.get("data")).isEqualTo("json");
      return stderr;
    } finally {
      lock.release();
    }
  }

  /** logback-classic and logback-core, which the build copies to target/inspector-logging. */
  private static List<String> logback() throws IOException {
    Path dir = Path.of("target", "inspector-logging").toAbsolutePath();
    try (Stream<Path> jars = Files.list(dir)) {
      List<String> found = jars.map(Path::toString).filter(n -> n.endsWith(".jar")).toList();
      assertThat(found).as("the logback jars in " + dir).hasSize(2);
      return found;
    }
  }

  /** Spring Boot's jar (its logback configuration and converters) and what it needs there. */
  private static List<String> springBootLogging() {
    List<String> prefixes =
        List.of("spring-boot-4", "spring-core-", "commons-logging-", "jspecify-");
    List<String> kept = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String name = Path.of(entry).getFileName().toString();
      if (prefixes.stream().anyMatch(name::startsWith)) {
        kept.add(entry);
      }
    }
    assertThat(kept).anyMatch(entry -> entry.contains("spring-boot-4"));
    return kept;
  }

  /** The library's classes or jar and the jars of its runtime dependencies, no Spring or tests. */
  private static List<String> runtimeClassPath() {
    List<String> kept = new ArrayList<>();
    List<String> runtime =
        List.of(
            "curator-framework-",
            "curator-client-",
            "curator-recipes-",
            "zookeeper-3",
            "zookeeper-jute-",
            "slf4j-api-",
            "guava-",
            "failureaccess-",
            "netty-");
    String library = Path.of("recipes", "target").toString();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String name = Path.of(entry).getFileName().toString();
      boolean isLibrary = entry.contains(library) || name.startsWith("lockstep-recipes-0");
      if (isLibrary || runtime.stream().anyMatch(name::startsWith) && !name.contains("tests")) {
        kept.add(entry);
      }
    }
    assertThat(kept).as("the library and its runtime jars").hasSizeGreaterThan(runtime.size());
    assertThat(kept).noneMatch(entry -> entry.contains("spring"));
    return kept;
  }
}

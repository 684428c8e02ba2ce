package io.lockstep.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.Ensemble;
import io.lockstep.testing.Sessions;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.CloseableUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The demo run for a few seconds at a time on a shared three-server ensemble, and its commands. */
@Timeout(180)
class DemoTest {
  static {
    System.setProperty("zookeeper.4lw.commands.whitelist", "*");
    System.setProperty("zookeeper.admin.enableServer", "false");
  }

  private static TestingCluster cluster;

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @BeforeAll
  static void startEnsemble() throws Exception {
    cluster = new TestingCluster(3);
    cluster.start();
  }

  @AfterAll
  static void stopEnsemble() {
    CloseableUtils.closeQuietly(cluster);
  }

  private List<RunResult> runWorkloads(String... args) throws Exception {
    DemoOptions options = DemoOptions.parse(args);
    List<RunResult> results =
        Demo.runWorkloads(options, Ensemble.of(cluster), new Console(print(out), false));
    assertThat(Demo.exitStatus(options, results)).as(output()).isZero();
    return results;
  }

  private static void assertInvariantsHeld(RunResult result) {
    assertThat(result.invariants()).hasSize(3);
    for (RunResult.Invariant invariant : result.invariants()) {
      assertThat(invariant.held())
          .as("%s %s: %s", result.library(), invariant.name(), invariant.detail())
          .isTrue();
    }
  }

  @Test
  void shortRun_doesEveryOperation_andKeepsEveryInvariant() throws Exception {
    List<RunResult> results =
        runWorkloads("--duration", "4s", "--instances", "2", "--threads", "2", "--accounts", "6");

    RunResult result = results.get(0);
    assertThat(results).hasSize(1);
    assertThat(result.library()).isEqualTo("Lockstep");
    assertInvariantsHeld(result);
    for (Operation operation : Operation.values()) {
      assertThat(result.metrics().of(operation).completed.sum()).as(operation.label()).isPositive();
    }
    assertThat(result.metrics().auditsBalanced.sum()).isPositive();
    assertThat(result.metrics().refused.sum()).isZero();
    assertThat(result.metrics().losses.sum()).isZero();
  }

  @Test
  void chaosRun_refusesThePausedHoldersWrite_andKeepsEveryInvariant() throws Exception {
    List<RunResult> results =
        runWorkloads(
            "--chaos", "--duration", "6s", "--instances", "2", "--threads", "2", "--accounts", "6");

    RunResult result = results.get(0);
    assertInvariantsHeld(result);
    assertThat(result.metrics().faults.sum()).as("server killed, session expired").isEqualTo(2);
    assertThat(result.metrics().losses.sum()).as("loss notifications").isPositive();
    assertThat(result.metrics().refused.sum()).as("fenced writes refused").isPositive();
    assertThat(result.metrics().staleCommitted.sum()).isZero();
    assertThat(output())
        .contains("chaos: killed server", "chaos: restarted server")
        .contains("refused by ZooKeeper, the ownership check failed");
  }

  @Test
  void compareCurator_runsBothLibraries_andReportsThemSideBySide() throws Exception {
    DemoOptions options =
        DemoOptions.parse(
            "--compare-curator", "--duration", "3s", "--instances", "2", "--threads", "2");
    List<RunResult> results =
        Demo.runWorkloads(options, Ensemble.of(cluster), new Console(print(out), false));

    assertThat(results).extracting(RunResult::library).containsExactly("Lockstep", "Curator");
    assertThat(results).extracting(RunResult::fenced).containsExactly(true, false);
    results.forEach(DemoTest::assertInvariantsHeld);
    assertThat(Demo.exitStatus(options, results)).isZero();
    assertThat(Report.lines(options, "test ensemble", results))
        .anySatisfy(
            line ->
                assertThat(line)
                    .startsWith("  transfer")
                    .contains("MultiMutex", "InterProcessMultiLock"))
        .anySatisfy(line -> assertThat(line).contains("Curator's writes were unfenced"));
  }

  @Test
  void commandLine_againstAGivenEnsemble_printsTheSummaryAndExitsZero() {
    int status =
        Demo.run(
            new String[] {
              "--connect", cluster.getConnectString(), "--duration", "2s", "--instances", "1"
            },
            print(out),
            print(err),
            false);

    assertThat(status).as(output() + err).isZero();
    assertThat(output())
        .contains("Run 1 of 1: Lockstep recipes, 1 instances x 4 threads")
        .contains("ok     money conserved")
        .contains("ok     no two exclusive holders at once")
        .contains("Result: Lockstep: every invariant held.");
  }

  @Test
  void inspect_printsHoldersAndWaiters_ofLockstepAndCuratorLocks() throws Exception {
    try (TestingServer server = new TestingServer();
        Ensemble ensemble = Ensemble.external(server.getConnectString());
        CuratorFramework holderClient = ensemble.newClient();
        CuratorFramework waiterClient = ensemble.newClient()) {
      ReentrantMutex holder = new ReentrantMutex(holderClient, "/locks/orders");
      NonReentrantMutex waiter = new NonReentrantMutex(waiterClient, "/locks/orders");
      InterProcessReadWriteLock catalog = new InterProcessReadWriteLock(holderClient, "/catalog");
      holder.acquire();
      catalog.readLock().acquire();
      CompletableFuture<Void> waiting =
          CompletableFuture.runAsync(
              () -> {
                try {
                  waiter.acquire();
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              });
      await().atMost(Duration.ofSeconds(10)).until(() -> holder.getParticipantNodes().size() == 2);

      int status =
          Demo.run(
              new String[] {
                "inspect",
                "--connect",
                server.getConnectString(),
                "/locks/orders",
                "/catalog",
                "/locks/none"
              },
              print(out),
              print(err),
              false);

      assertThat(status).as(err.toString(StandardCharsets.UTF_8)).isZero();
      String holderSession = "0x" + Long.toHexString(Sessions.id(holderClient));
      String waiterSession = "0x" + Long.toHexString(Sessions.id(waiterClient));
      assertThat(output().lines())
          .contains("/locks/orders: 1 holder, 1 waiter", "/catalog: 1 holder, 0 waiters")
          .contains("/locks/none: not held, nobody waiting")
          .anySatisfy(
              line ->
                  assertThat(line).startsWith("  holder  MUTEX").contains("-lock-", holderSession))
          .anySatisfy(
              line ->
                  assertThat(line).startsWith("  waiter  MUTEX").contains("-lock-", waiterSession))
          .anySatisfy(
              line ->
                  assertThat(line)
                      .startsWith("  holder  READ")
                      .contains("__READ__", holderSession));

      holder.release();
      waiting.get(10, TimeUnit.SECONDS);
      waiter.release();
      catalog.readLock().release();
    }
  }

  @Test
  void badCommandLine_printsUsage_andExitsTwo() {
    assertThat(Demo.run(new String[] {"--instances", "0"}, print(out), print(err), false))
        .isEqualTo(Demo.USAGE);
    assertThat(Demo.run(new String[] {"inspect", "/locks/x"}, print(out), print(err), false))
        .isEqualTo(Demo.USAGE);
    assertThat(Demo.run(new String[] {"--speed", "11"}, print(out), print(err), false))
        .isEqualTo(Demo.USAGE);

    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("demo: --instances and --threads must be at least 1")
        .contains("demo: inspect needs --connect HOST:PORT")
        .contains("demo: unknown option --speed")
        .contains("Usage:");
    assertThat(out.size()).isZero();
  }

  @Test
  void options_acceptBothSpellings_andDurationUnits() {
    DemoOptions options =
        DemoOptions.parse("--duration=90s", "--threads", "3", "--chaos", "--compare-curator");

    assertThat(options.duration()).isEqualTo(Duration.ofSeconds(90));
    assertThat(options.threads()).isEqualTo(3);
    assertThat(options.chaos()).isTrue();
    assertThat(options.compareCurator()).isTrue();
    assertThat(options.embedded()).isTrue();
    assertThat(DemoOptions.parseDuration("2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(DemoOptions.parseDuration("1500ms")).isEqualTo(Duration.ofMillis(1500));
    assertThat(DemoOptions.parse("--help").command()).isEqualTo(DemoOptions.Command.HELP);
  }

  private String output() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private static PrintStream print(ByteArrayOutputStream bytes) {
    return new PrintStream(bytes, true, StandardCharsets.UTF_8);
  }
}

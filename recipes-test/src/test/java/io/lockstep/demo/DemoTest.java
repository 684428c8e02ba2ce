package io.lockstep.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.micrometer.LockstepMetrics;
import io.lockstep.testing.Ensemble;
import io.lockstep.testkit.internal.Sessions;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.CloseableUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The demo run for a few seconds at a time on a shared three-server ensemble, and its commands. */
@Timeout(180)
class DemoTest {
  /** A plain progress line: {@code 4s / 8s ops 1,234 310 ops/s faults 1 lost 2 ...}. */
  private static final Pattern PROGRESS =
      Pattern.compile(
          " +\\d+s / \\d+s +ops +[\\d,]+ +[\\d,]+ ops/s +faults \\d+ +lost \\d+ +refused \\d+");

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
  void quietRun_doesEveryOperation_andKeepsEveryInvariant() throws Exception {
    List<RunResult> results =
        runWorkloads(
            "--no-faults",
            "--duration",
            "4s",
            "--instances",
            "2",
            "--threads",
            "2",
            "--accounts",
            "6");

    RunResult result = results.get(0);
    assertThat(results).hasSize(1);
    assertThat(result.library()).isEqualTo("Lockstep");
    assertInvariantsHeld(result);
    for (Operation operation : Operation.values()) {
      assertThat(result.metrics().of(operation).completed.sum()).as(operation.label()).isPositive();
    }
    assertThat(result.metrics().auditsBalanced.sum()).isPositive();
    assertThat(result.metrics().faults.sum()).isZero();
    assertThat(result.metrics().refused.sum()).isZero();
    assertThat(result.metrics().losses.sum()).isZero();
    assertThat(output()).doesNotContain("fault:");
    assertThat(result.meters()).get().satisfies(meters -> assertThat(meters.lost()).isZero());
  }

  @Test
  void defaultRun_hasAFaultPhase_andReportsItsMetersAndRecording(@TempDir Path dir)
      throws Exception {
    Path jfr = dir.resolve("run.jfr");
    DemoOptions options =
        DemoOptions.parse(
            "--duration",
            "8s",
            "--instances",
            "2",
            "--threads",
            "2",
            "--accounts",
            "6",
            "--jfr",
            jfr.toString());
    assertThat(options.faults()).as("faults are the default").isTrue();

    Demo.Outcome outcome =
        Demo.runAndReport(options, Ensemble.of(cluster), new Console(print(out), false));

    String output = output();
    List<String> lines = output.lines().toList();
    assertThat(outcome.status()).as(output).isZero();
    RunResult result = outcome.results().get(0);
    assertInvariantsHeld(result);
    // the fault phase ran: a server killed and restarted, a paused holder's session expired
    assertThat(result.metrics().faults.sum()).as("server killed, session expired").isEqualTo(2);
    assertThat(result.metrics().losses.sum()).as("holds lost").isPositive();
    assertThat(result.metrics().refused.sum()).as("fenced writes refused").isPositive();
    assertThat(result.metrics().staleCommitted.sum()).isZero();
    assertThat(output)
        .contains("fault: killed server", "fault: restarted server")
        .containsPattern(
            "resumes and commits its prepared write to acct-\\d\\d: refused by the database,"
                + " token \\d+ < \\d+ admitted for /lockstep-demo/.*/locks/acct-\\d\\d"
                + " \\(StaleFencingTokenException\\)")
        .contains("fault phase over after")
        .contains("Result: Lockstep: every invariant held.");
    // the two lines before the run: what runs, what the figures mean
    assertThat(lines.get(1))
        .startsWith("Workload: 2 instances x 2 threads move money among 6 accounts")
        .contains("8 s; at 2 s a server dies and a lock holder's session expires");
    assertThat(lines.get(2)).startsWith("Figures: ops done, ops/s; faults injected; lost = ");
    // not a terminal: progress as plain lines, never a carriage return
    assertThat(output).doesNotContain("\r");
    assertThat(lines.stream().filter(line -> PROGRESS.matcher(line).matches()))
        .hasSizeGreaterThan(2);
    // the Micrometer figures: acquire percentiles per recipe, holds lost
    assertThat(result.meters()).isPresent();
    MeterFigures.Snapshot meters = result.meters().get();
    assertThat(meters.lost()).as("lockstep.lock.lost").isPositive();
    assertThat(meters.granted()).isPositive();
    assertThat(output)
        .contains("Micrometer: a LockstepMetrics per client, bound to one SimpleMeterRegistry");
    assertThat(lines)
        .anySatisfy(
            line ->
                assertThat(line)
                    .startsWith("  " + LockstepMetrics.ACQUIRE)
                    .contains("granted", "p50 wait", "p99 wait", "timed out", "failed"))
        .anySatisfy(line -> assertThat(line).matches("    MultiMutex +[\\d,]+ +[\\d.]+ m?s .*"))
        .anySatisfy(
            line ->
                assertThat(line)
                    .startsWith("  " + LockstepMetrics.LOST)
                    .endsWith(
                        String.format(
                            " %,d hold%s lost", meters.lost(), meters.lost() == 1 ? "" : "s")));
    // the Flight Recording: where it is, how to open it, and Lockstep's events in it
    assertThat(outcome.recording()).isPresent();
    assertThat(jfr).exists();
    assertThat(output)
        .contains("Flight Recording of the run: " + jfr)
        .contains("jfr print --events io.lockstep.LockAcquire " + jfr);
    assertThat(countEvents(jfr, "io.lockstep.LockAcquire", null)).isPositive();
    assertThat(countEvents(jfr, "io.lockstep.LockHold", null)).isPositive();
    assertThat(countEvents(jfr, "io.lockstep.LockStateChange", "LOST")).isPositive();
  }

  /** Events of {@code type} in the recording, with the state {@code state} if not null. */
  private static long countEvents(Path file, String type, String state) throws IOException {
    long count = 0;
    for (RecordedEvent event : RecordingFile.readAllEvents(file)) {
      if (event.getEventType().getName().equals(type)
          && (state == null || state.equals(event.getString("state")))) {
        count++;
      }
    }
    return count;
  }

  @Test
  void compareCurator_runsBothLibraries_andReportsThemSideBySide() throws Exception {
    DemoOptions options =
        DemoOptions.parse(
            "--no-faults",
            "--compare-curator",
            "--duration",
            "3s",
            "--instances",
            "2",
            "--threads",
            "2");
    List<RunResult> results =
        Demo.runWorkloads(options, Ensemble.of(cluster), new Console(print(out), false));

    assertThat(results).extracting(RunResult::library).containsExactly("Lockstep", "Curator");
    assertThat(results).extracting(RunResult::fenced).containsExactly(true, false);
    assertThat(results.get(1).meters()).as("no Lockstep meters of Curator's locks").isEmpty();
    results.forEach(DemoTest::assertInvariantsHeld);
    assertThat(Demo.exitStatus(options, results)).isZero();
    assertThat(Report.lines(options, "test ensemble", results))
        .anySatisfy(
            line ->
                assertThat(line)
                    .startsWith("  transfer")
                    .contains("MultiMutex", "InterProcessMultiLock"))
        .anySatisfy(line -> assertThat(line).contains("Curator's writes were unfenced"))
        .anySatisfy(line -> assertThat(line).startsWith("  Micrometer, Lockstep run:"));
  }

  @Test
  void commandLine_againstAGivenEnsemble_expiresASession_andPrintsPlainProgress() {
    int status =
        Demo.run(
            new String[] {
              "--connect",
              cluster.getConnectString(),
              "--duration",
              "3s",
              "--instances",
              "1",
              "--no-jfr"
            },
            print(out),
            print(err),
            false);

    assertThat(status).as(output() + err).isZero();
    assertThat(output())
        .contains("Workload: 1 instances x 4 threads", "a lock holder's session expires")
        .contains("Run 1 of 1: Lockstep recipes, 1 instances x 4 threads")
        .contains("fault: the ensemble is not ours, so no server is killed")
        .contains("ok     money conserved")
        .contains("ok     no two exclusive holders at once")
        .contains("lockstep.lock.lost")
        .contains("Result: Lockstep: every invariant held.")
        .doesNotContain("\r", "Flight Recording of the run");
    assertThat(output().lines()).anySatisfy(line -> assertThat(line).matches(PROGRESS));
  }

  @Test
  void progress_isRedrawnInPlace_onATerminal_unlessToldOtherwise() {
    String[] quiet = {
      "--connect",
      cluster.getConnectString(),
      "--duration",
      "2s",
      "--instances",
      "1",
      "--no-faults",
      "--no-jfr"
    };

    assertThat(runCapturing(quiet, true)).contains("\r").containsPattern("\r +\\d+s / 2s +ops");
    assertThat(runCapturing(append(quiet, "--progress", "lines"), true))
        .doesNotContain("\r")
        .containsPattern("(?m)^ +\\d+s / 2s +ops");
    assertThat(runCapturing(append(quiet, "--progress=live"), false)).contains("\r");
  }

  /** Runs the demo's command line; its output, once it exited 0. */
  private static String runCapturing(String[] args, boolean terminal) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    int status = Demo.run(args, print(bytes), print(errors), terminal);
    String output = bytes.toString(StandardCharsets.UTF_8);
    assertThat(status).as(output + errors.toString(StandardCharsets.UTF_8)).isZero();
    return output;
  }

  private static String[] append(String[] args, String... more) {
    String[] all = Arrays.copyOf(args, args.length + more.length);
    System.arraycopy(more, 0, all, args.length, more.length);
    return all;
  }

  @Test
  void intro_saysWhatRuns_andWhatTheFiguresMean_inTwoLines() {
    assertThat(Report.intro(DemoOptions.parse(), true))
        .containsExactly(
            "Workload: 4 instances x 4 threads move money among 16 accounts of an H2 database"
                + " under Lockstep locks, 45 s; at 15 s a server dies and a lock holder's session"
                + " expires.",
            "Figures: ops done, ops/s; faults injected; lost = holds whose lock said LOST;"
                + " refused = stale writes the database fenced off. Then: invariants, Micrometer,"
                + " Flight Recording.");
    assertThat(Report.intro(DemoOptions.parse("--no-faults", "--no-jfr"), true))
        .hasSize(2)
        .first()
        .asString()
        .endsWith("45 s; no faults (--no-faults).");
    assertThat(Report.intro(DemoOptions.parse("--compare-curator", "--duration", "1m"), false))
        .first()
        .asString()
        .contains("under Lockstep's locks, then Curator's, 60 s each; at 20 s a lock holder's");
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
  void report_saysSo_whenTheFaultPhaseLostNothing() {
    Metrics nothingLost = new Metrics();
    Metrics lostButNoWrite = new Metrics();
    lostButNoWrite.losses.increment();
    List<RunResult.Invariant> held = List.of(new RunResult.Invariant("money conserved", true, ""));
    DemoOptions options = DemoOptions.parse();

    assertThat(Report.lines(options, "test ensemble", List.of(result(nothingLost, held))))
        .anySatisfy(line -> assertThat(line).startsWith("  note: no hold was lost"));
    assertThat(Report.lines(options, "test ensemble", List.of(result(lostButNoWrite, held))))
        .anySatisfy(line -> assertThat(line).contains("no write was refused"));
    assertThat(
            Report.lines(
                DemoOptions.parse("--no-faults"),
                "test ensemble",
                List.of(result(nothingLost, held))))
        .noneSatisfy(line -> assertThat(line).contains("note:"));
  }

  private static RunResult result(Metrics metrics, List<RunResult.Invariant> invariants) {
    Map<Operation, String> recipes = new EnumMap<>(Operation.class);
    for (Operation operation : Operation.values()) {
      recipes.put(operation, "Recipe");
    }
    return new RunResult(
        "Lockstep", true, recipes, Duration.ofSeconds(1), metrics, Optional.empty(), invariants);
  }

  @Test
  void badCommandLine_printsUsage_andExitsTwo() {
    assertThat(Demo.run(new String[] {"--instances", "0"}, print(out), print(err), false))
        .isEqualTo(Demo.USAGE);
    assertThat(Demo.run(new String[] {"inspect", "/locks/x"}, print(out), print(err), false))
        .isEqualTo(Demo.USAGE);
    assertThat(Demo.run(new String[] {"--speed", "11"}, print(out), print(err), false))
        .isEqualTo(Demo.USAGE);
    assertThat(Demo.run(new String[] {"--progress", "often"}, print(out), print(err), false))
        .isEqualTo(Demo.USAGE);

    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("demo: --instances and --threads must be at least 1")
        .contains("demo: inspect needs --connect HOST:PORT")
        .contains("demo: unknown option --speed")
        .contains("demo: --progress is auto, live or lines, not often")
        .contains("Usage:");
    assertThat(out.size()).isZero();
  }

  @Test
  void options_acceptBothSpellings_andDurationUnits() {
    DemoOptions options =
        DemoOptions.parse(
            "--duration=90s", "--threads", "3", "--compare-curator", "--jfr", "out/run.jfr");

    assertThat(options.duration()).isEqualTo(Duration.ofSeconds(90));
    assertThat(options.threads()).isEqualTo(3);
    assertThat(options.compareCurator()).isTrue();
    assertThat(options.embedded()).isTrue();
    assertThat(options.jfr()).isEqualTo(Path.of("out/run.jfr"));
    assertThat(DemoOptions.parseDuration("2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(DemoOptions.parseDuration("1500ms")).isEqualTo(Duration.ofMillis(1500));
    assertThat(DemoOptions.parse("--help").command()).isEqualTo(DemoOptions.Command.HELP);
  }

  @Test
  void options_defaultToFaults_autoProgress_andARecording() {
    DemoOptions defaults = DemoOptions.parse();

    assertThat(defaults.faults()).isTrue();
    assertThat(defaults.progress()).isEqualTo(DemoOptions.ProgressMode.AUTO);
    assertThat(defaults.jfr()).isEqualTo(DemoOptions.defaultJfr());
    assertThat(defaults.jfr().getFileName()).hasToString("lockstep-demo.jfr");
    assertThat(DemoOptions.parse("--no-faults").faults()).isFalse();
    assertThat(DemoOptions.parse("--no-faults", "--chaos").faults()).isTrue();
    assertThat(DemoOptions.parse("--no-jfr").jfr()).isNull();
    assertThat(DemoOptions.parse("--progress=lines").progress())
        .isEqualTo(DemoOptions.ProgressMode.LINES);
    assertThat(DemoOptions.ProgressMode.AUTO.live(true)).isTrue();
    assertThat(DemoOptions.ProgressMode.AUTO.live(false)).isFalse();
    assertThat(DemoOptions.ProgressMode.LIVE.live(false)).isTrue();
    assertThat(DemoOptions.ProgressMode.LINES.live(true)).isFalse();
    assertThat(FaultPhase.begins(Duration.ofSeconds(45))).isEqualTo(Duration.ofSeconds(15));
    assertThat(FaultPhase.outage(Duration.ofSeconds(45))).isEqualTo(Duration.ofSeconds(4));
    assertThat(FaultPhase.outage(Duration.ofSeconds(6))).isEqualTo(Duration.ofSeconds(1));
  }

  private String output() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private static PrintStream print(ByteArrayOutputStream bytes) {
    return new PrintStream(bytes, true, StandardCharsets.UTF_8);
  }
}

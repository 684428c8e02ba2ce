package io.lockstep.bench;

import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.curator.test.TestingServer;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs every benchmark against one embedded ZooKeeper server, Curator's recipe and ours side by
 * side, and writes the results to {@code docs/benchmarks.md} with PNG charts next to it.
 *
 * <p><b>Sections.</b> {@code uncontended}: request and byte counts per cycle ({@link CycleCost})
 * and JMH throughput ({@link UncontendedLockBenchmark}) of the mutex, the non-reentrant mutex and
 * both sides of the read-write lock; {@code multi}: the same for multi-locks on K = 1, 4, 8, 16
 * paths ({@link MultiLockBenchmark}); {@code handoff}: queue drains ({@link HandoffScenario});
 * {@code contention}: T threads on one mutex ({@link ContentionScenario}); {@code rw}: read-heavy
 * mixes ({@link ReadWriteMixScenario}); {@code multicontention}: multi-locks on overlapping path
 * sets ({@link MultiLockContentionScenario}).
 *
 * <p><b>Command</b> (from the repository root):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--quick"   # a few minutes
 * mvn -B -Pbench verify -Dbench.args="--full"    # about a quarter of an hour
 * </pre>
 *
 * <p>Options: {@code --quick} (the default) or {@code --full}; {@code --only s1,s2} runs the named
 * sections and prints their tables to the console without touching {@code docs/}; {@code --out DIR}
 * writes the page and charts to {@code DIR} instead of {@code docs}, also for a partial run.
 *
 * <p><b>The page.</b> {@code docs/benchmarks.md} is written by hand except for the blocks between
 * {@code <!-- BEGIN GENERATED name ... -->} and {@code <!-- END GENERATED name -->} markers: the
 * run replaces those ({@link BenchmarkPage}) and keeps the prose around them, which explains what
 * each section measures and what each reason for a missed goal means ({@link GoalVerdicts}).
 */
public final class BenchmarkSuite {
  private static final Pattern COMMA = Pattern.compile(",");

  private BenchmarkSuite() {}

  /** The parts of the suite, by the name {@code --only} takes. */
  enum Section {
    UNCONTENDED("uncontended"),
    MULTI("multi"),
    HANDOFF("handoff"),
    CONTENTION("contention"),
    RW("rw"),
    MULTI_CONTENTION("multicontention");

    private final String option;

    Section(String option) {
      this.option = option;
    }

    static Section of(String option) {
      return Arrays.stream(values())
          .filter(s -> s.option.equals(option.trim().toLowerCase(Locale.ROOT)))
          .findFirst()
          .orElseThrow(() -> new IllegalArgumentException("no section " + option));
    }
  }

  /**
   * Parsed command line.
   *
   * @param settings quick or full
   * @param sections the sections to run
   * @param out where the page and charts go
   * @param command the command line to print on the page
   */
  record Arguments(
      SuiteSettings settings, Set<Section> sections, Path out, boolean outGiven, String command) {
    boolean writesPage() {
      return outGiven || sections.equals(EnumSet.allOf(Section.class));
    }

    static Arguments parse(String[] args) {
      SuiteSettings settings = SuiteSettings.quick();
      Set<Section> sections = EnumSet.allOf(Section.class);
      Path out = Path.of("docs");
      boolean outGiven = false;
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--quick" -> settings = SuiteSettings.quick();
          case "--full" -> settings = SuiteSettings.full();
          case "--only" -> {
            sections = EnumSet.noneOf(Section.class);
            for (String name : COMMA.split(value(args, ++i), -1)) {
              sections.add(Section.of(name));
            }
          }
          case "--out" -> {
            out = Path.of(value(args, ++i));
            outGiven = true;
          }
          default ->
              throw new IllegalArgumentException(
                  "unknown option "
                      + args[i]
                      + "; use --quick | --full [--only s1,s2] [--out DIR]");
        }
      }
      String given = String.join(" ", args).trim();
      String command =
          "mvn -B -Pbench verify" + (given.isEmpty() ? "" : " -Dbench.args=\"" + given + "\"");
      return new Arguments(settings, sections, out, outGiven, command);
    }

    private static String value(String[] args, int i) {
      if (i >= args.length) {
        throw new IllegalArgumentException(args[i - 1] + " needs a value");
      }
      return args[i];
    }
  }

  /** Runs the suite; see the class comment for the options. */
  public static void main(String[] args) throws Exception {
    System.setProperty("java.awt.headless", "true");
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    // JMH refuses to start while another JMH run on the machine holds its lock file. The suite's
    // own scenarios load the machine whatever JMH does, so it reports the load average instead.
    System.setProperty("jmh.ignoreLock", "true");
    Arguments arguments = Arguments.parse(args);
    int status = 0;
    try {
      run(arguments);
    } catch (Exception e) {
      e.printStackTrace();
      status = 1;
    }
    System.exit(status); // ZooKeeper and Curator leave non-daemon threads behind
  }

  static void run(Arguments arguments) throws Exception {
    SuiteSettings settings = arguments.settings();
    Instant started = Instant.now();
    String loadBefore = MachineInfo.loadAverage();
    SuiteResults results = new SuiteResults();
    try (TestingServer server = BenchZooKeeper.startServer()) {
      String connect = server.getConnectString();
      ServerProbe probe = ServerProbe.of(connect);
      MachineInfo machine = MachineInfo.describe(probe);
      log(
          "suite ("
              + settings.mode()
              + ") against ZooKeeper "
              + machine.zookeeper()
              + " at "
              + connect);

      Set<Section> sections = arguments.sections();
      if (sections.contains(Section.UNCONTENDED)) {
        count(probe, connect, settings, results, rows(false));
      }
      if (sections.contains(Section.MULTI)) {
        count(probe, connect, settings, results, rows(true));
      }
      if (sections.contains(Section.UNCONTENDED)) {
        jmh(UncontendedLockBenchmark.class, connect, settings, results, rows(false));
      }
      if (sections.contains(Section.MULTI)) {
        jmh(MultiLockBenchmark.class, connect, settings, results, rows(true));
      }
      if (sections.contains(Section.HANDOFF)) {
        handoff(probe, connect, settings, results);
      }
      if (sections.contains(Section.CONTENTION)) {
        contention(probe, connect, settings, results);
      }
      if (sections.contains(Section.RW)) {
        for (double share : settings.readShares()) {
          for (Library library : Library.values()) {
            LoadResult result = ReadWriteMixScenario.run(probe, connect, settings, library, share);
            results.mixes.computeIfAbsent(share, s -> new ArrayList<>()).add(result);
            log(
                String.format(
                    "rw %.0f%% reads %s: %s", share * 100, library.label(), describe(result)));
          }
        }
      }
      if (sections.contains(Section.MULTI_CONTENTION)) {
        for (Library library : Library.values()) {
          LoadResult result = MultiLockContentionScenario.run(probe, connect, settings, library);
          results.multi.add(result);
          log("multi-lock contention " + library.label() + ": " + describe(result));
        }
      }

      Duration took = Duration.between(started, Instant.now());
      BenchmarkPage page =
          new BenchmarkPage(
              settings,
              machine,
              results,
              arguments.command(),
              DateTimeFormatter.ISO_LOCAL_DATE_TIME
                      .withZone(ZoneOffset.UTC)
                      .format(started.truncatedTo(ChronoUnit.SECONDS))
                  + " UTC",
              took,
              loadBefore,
              MachineInfo.loadAverage());
      if (arguments.writesPage()) {
        Files.createDirectories(arguments.out());
        BenchmarkCharts.write(results, arguments.out());
        Path markdown = arguments.out().resolve("benchmarks.md");
        Files.writeString(markdown, page.fill(template(markdown)));
        log("wrote " + markdown + " and charts in " + took.toSeconds() + " s");
      } else {
        page.blocks()
            .forEach((block, text) -> System.out.println("## " + block.id() + "\n\n" + text));
      }
    }
  }

  /**
   * The page whose generated blocks the run replaces: the one already at {@code markdown}, else the
   * repository's {@code docs/benchmarks.md} (its prose copied along), else bare headings.
   */
  private static String template(Path markdown) throws IOException {
    if (Files.exists(markdown)) {
      return Files.readString(markdown);
    }
    Path docs = Path.of("docs", "benchmarks.md");
    return Files.exists(docs) ? Files.readString(docs) : BenchmarkPage.bareTemplate();
  }

  private static List<SuiteResults.Row> rows(boolean multi) {
    return SuiteResults.UNCONTENDED_ROWS.stream()
        .filter(row -> (row.recipe() == Recipe.MULTI) == multi)
        .toList();
  }

  /** The counting pass: request and byte counts per uncontended cycle, one fresh client a row. */
  private static void count(
      ServerProbe probe,
      String connect,
      SuiteSettings settings,
      SuiteResults results,
      List<SuiteResults.Row> rows)
      throws Exception {
    for (SuiteResults.Row row : rows) {
      for (Library library : Library.values()) {
        try (Clients clients = new Clients(connect, 1)) {
          CycleCost cost =
              CycleCost.measure(
                  probe,
                  clients.get(0),
                  library,
                  row.recipe(),
                  Paths.unique("count"),
                  row.paths(),
                  settings.countedCycles());
          results.cost(row, library, cost);
          log(
              String.format(
                  "count %s %s: %.2f requests, %.0f response bytes per cycle",
                  row.label(),
                  library.label(),
                  cost.requestsPerCycle(),
                  cost.responseBytesPerCycle()));
        }
      }
    }
  }

  /**
   * Runs one JMH benchmark row by row: both libraries of a row one right after the other, so that
   * the load of a shared machine drifts as little as possible between the two.
   */
  private static void jmh(
      Class<?> benchmark,
      String connect,
      SuiteSettings settings,
      SuiteResults results,
      List<SuiteResults.Row> rows)
      throws Exception {
    TimeValue iteration = TimeValue.milliseconds(settings.jmhIterationTime().toMillis());
    for (SuiteResults.Row row : rows) {
      OptionsBuilder options = new OptionsBuilder();
      options
          .include("^" + Pattern.quote(benchmark.getName()) + "\\.")
          .forks(settings.jmhForks())
          .warmupIterations(settings.jmhWarmupIterations())
          .warmupTime(iteration)
          .measurementIterations(settings.jmhIterations())
          .measurementTime(iteration)
          .jvmArgsAppend(
              "-D" + BenchZooKeeper.CONNECT_PROPERTY + "=" + connect,
              "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
          .shouldFailOnError(true);
      if (row.recipe() == Recipe.MULTI) {
        options.param("paths", String.valueOf(row.paths()));
      } else {
        options.param("recipe", row.recipe().name());
      }
      Collection<RunResult> runs = new Runner(options.build()).run();
      for (RunResult run : runs) {
        Library library = Library.valueOf(run.getParams().getParam("library"));
        var primary = run.getPrimaryResult();
        SuiteResults.Score score =
            new SuiteResults.Score(primary.getScore(), primary.getScoreError());
        results.score(row, library, score);
        log(
            String.format(
                "jmh %s %s: %.1f ± %.1f cycles/s",
                row.label(), library.label(), score.perSecond(), score.error()));
      }
    }
  }

  private static void handoff(
      ServerProbe probe, String connect, SuiteSettings settings, SuiteResults results)
      throws Exception {
    int warmUp = settings.queueLengths().get(0);
    for (Library library : Library.values()) {
      var unused = HandoffScenario.run(probe, connect, library, warmUp, settings.handoffSessions());
      log("handoff warm-up drain of " + warmUp + " " + library.label() + " done (not reported)");
    }
    for (int repeat = 0; repeat < settings.handoffRepeats(); repeat++) {
      for (int waiters : settings.queueLengths()) {
        for (Library library : Library.values()) {
          HandoffScenario.Result result =
              HandoffScenario.run(probe, connect, library, waiters, settings.handoffSessions());
          results.handoffs.add(result);
          log(
              String.format(
                  "handoff N=%d %s: drain %.1f ms, %.0f us/handoff, %.2f requests and %.0f bytes"
                      + " per handoff, %.2f watches fired per delete (max %d)",
                  waiters,
                  library.label(),
                  result.drainMillis(),
                  result.handoffMicros(),
                  result.requestsPerHandoff(),
                  result.responseBytesPerHandoff(),
                  result.watchesPerDelete(),
                  result.maxDeletedWatches()));
        }
      }
    }
  }

  private static void contention(
      ServerProbe probe, String connect, SuiteSettings settings, SuiteResults results)
      throws Exception {
    for (ContentionScenario.ClientMode mode : ContentionScenario.ClientMode.values()) {
      for (int threads : settings.threadCounts()) {
        for (Library library : Library.values()) {
          LoadResult result =
              ContentionScenario.run(probe, connect, settings, library, mode, threads);
          results.contention.computeIfAbsent(mode, m -> new ArrayList<>()).add(result);
          log(
              String.format(
                  "contention %s T=%d %s: %s",
                  mode.label(), threads, library.label(), describe(result)));
        }
      }
    }
  }

  private static String describe(LoadResult result) {
    return String.format(
        "%.0f acquisitions/s, p50 %.2f ms, p99 %.2f ms, p999 %.2f ms, %.2f requests/acquisition",
        result.perSecond(),
        result.millis(50),
        result.millis(99),
        result.millis(99.9),
        result.requestsPerAcquisition());
  }

  private static void log(String message) {
    System.out.println("[bench] " + message);
  }
}

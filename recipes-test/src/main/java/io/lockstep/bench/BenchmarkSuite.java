package io.lockstep.bench;

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
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.curator.test.TestingServer;

/**
 * Runs every benchmark against one embedded ZooKeeper server, Curator's recipe and ours side by
 * side, and writes the results to {@code docs/benchmarks.md} with PNG charts next to it.
 *
 * <p><b>Sections.</b> {@code uncontended}: request and byte counts per cycle ({@link CycleCost})
 * and JMH throughput and bytes allocated per cycle ({@link UncontendedLockBenchmark}) of the mutex,
 * the non-reentrant mutex and both sides of the read-write lock; {@code multi}: the same for
 * multi-locks on K = 1, 4, 8, 16 paths ({@link MultiLockBenchmark}); {@code slowlink}: the
 * uncontended rows through a proxy that adds 0 and 1 ms to each round trip ({@link SlowLinkRuns});
 * {@code jfr}: the uncontended rows with and without a Flight Recording ({@link RecordingRuns});
 * {@code handoff}: queue drains ({@link HandoffScenario}); {@code waiters}: 1,000 and 10,000
 * waiters on one client ({@link WaitersScenario}); {@code contention}: T threads on one mutex
 * ({@link ContentionScenario}, one series per {@link Contender}); {@code watches}: watch events per
 * acquisition ({@link WatchScenario}); {@code cohort}: local handoff against Curator at T = 8 on
 * one client, rates and the fairness to another process, at 0 and 1 ms added round trip ({@link
 * CohortRuns}); {@code rw}: read-heavy mixes ({@link ReadWriteMixScenario}); {@code
 * multicontention}: multi-locks on overlapping path sets ({@link MultiLockContentionScenario});
 * {@code unreachable}: how far past its budget each timed form returns with ZooKeeper cut off or
 * silently partitioned, and how long a release takes then ({@link UnreachableScenario}); {@code
 * semaphore-election}: {@code CountingSemaphore} against {@code InterProcessSemaphoreV2},
 * uncontended and under contention ({@link SemaphoreScenario}), and leader handoffs of {@code
 * LeaderElection} against {@code LeaderLatch} ({@link ElectionScenario}); {@code linger}: lock
 * caching, a loop alone and two processes taking turns, against Curator at 0 and 1 ms added round
 * trip ({@link LingerRuns}); {@code keyed}: keyed locks at scale, a Curator mutex per key against
 * {@code KeyedLocks} flat and hashed ({@link KeyedScenario}); {@code fence}: what {@code
 * JdbcFence}'s admission adds to a transaction, on H2 and PostgreSQL ({@link FenceAdmitBenchmark});
 * {@code readshare}: 8 readers and a writer of one client, Curator's read-write lock against ours
 * with read sharing, at 95 / 5 and 80 / 20 ({@link ReadShareScenario}).
 *
 * <p><b>Command</b> (from the repository root):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--quick"   # about a quarter of an hour
 * mvn -B -Pbench verify -Dbench.args="--full"    # about fifty minutes
 * </pre>
 *
 * <p>Options: {@code --quick} (the default) or {@code --full}; {@code --only s1,s2} runs the named
 * sections and prints their tables to the console without touching {@code docs/}; {@code --out DIR}
 * writes the page and charts to {@code DIR} instead of {@code docs}, also for a partial run; {@code
 * --update}, with {@code --only}, replaces in the page the blocks of the sections run (and their
 * chart) and leaves every other block and chart as it is, for sections whose block says its own run
 * ({@code uncontended} and {@code multi}, which share one block, {@code unreachable}, {@code
 * semaphore-election}, {@code linger}, {@code keyed}, {@code fence}, {@code readshare}); {@code
 * --curator-waiters N} runs Curator's thread-per-waiter scenario up to N waiters (default: 1,000
 * quick, 10,000 full); {@code --keyed-keys N} and {@code --keyed-contended M} set the keys of the
 * keyed section's one-client and four-client runs (default: 10,000 and 2,000 quick, 1,000,000 and
 * 100,000 full); {@code --recipes r1,r2} runs only the uncontended rows of those recipes ({@code
 * mutex}, {@code non-reentrant-mutex}, {@code read}, {@code write}, {@code multi}), printed, never
 * written: {@code --only uncontended --recipes mutex} is the cheapest way to the mutex row's bytes
 * allocated per cycle, Curator's and ours (about a minute quick, three full).
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
    UNCONTENDED("uncontended", BenchmarkPage.Block.UNCONTENDED),
    MULTI("multi", BenchmarkPage.Block.UNCONTENDED),
    SLOW_LINK("slowlink"),
    RECORDING("jfr"),
    HANDOFF("handoff"),
    WAITERS("waiters"),
    CONTENTION("contention"),
    WATCHES("watches"),
    COHORT("cohort"),
    RW("rw"),
    MULTI_CONTENTION("multicontention"),
    UNREACHABLE("unreachable", BenchmarkPage.Block.UNREACHABLE),
    SEMAPHORE_ELECTION("semaphore-election", BenchmarkPage.Block.SEMAPHORE_ELECTION),
    LINGER("linger", BenchmarkPage.Block.LINGER),
    KEYED("keyed", BenchmarkPage.Block.KEYED),
    FENCE("fence", BenchmarkPage.Block.FENCE),
    READSHARE("readshare", BenchmarkPage.Block.READSHARE);

    private final String option;

    /** The block that says its own run, so that {@code --update} may replace it alone; or null. */
    private final BenchmarkPage.Block ownBlock;

    Section(String option) {
      this(option, null);
    }

    Section(String option, BenchmarkPage.Block ownBlock) {
      this.option = option;
      this.ownBlock = ownBlock;
    }

    String option() {
      return option;
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
   * @param outGiven whether {@code --out} named it
   * @param update whether the run replaces only its sections' own blocks ({@code --update})
   * @param recipes the recipes whose uncontended rows run ({@code --recipes}); all by default
   * @param command the command line to print on the page
   */
  record Arguments(
      SuiteSettings settings,
      Set<Section> sections,
      Path out,
      boolean outGiven,
      boolean update,
      Set<Recipe> recipes,
      int keyedKeys,
      int keyedContended,
      String command) {
    boolean writesPage() {
      return recipes.size() == Recipe.values().length
          && (update || outGiven || sections.equals(EnumSet.allOf(Section.class)));
    }

    /** The blocks the run replaces in the page: all of them, or with {@code --update} its own. */
    Set<BenchmarkPage.Block> blocks() {
      if (!update) {
        return EnumSet.allOf(BenchmarkPage.Block.class);
      }
      Set<BenchmarkPage.Block> blocks = EnumSet.noneOf(BenchmarkPage.Block.class);
      sections.forEach(section -> blocks.add(section.ownBlock));
      return blocks;
    }

    static Arguments parse(String[] args) {
      SuiteSettings settings = SuiteSettings.quick();
      Set<Section> sections = EnumSet.allOf(Section.class);
      Path out = Path.of("docs");
      boolean outGiven = false;
      boolean update = false;
      int curatorWaiters = -1;
      int keyedKeys = -1;
      int keyedContended = -1;
      Set<Recipe> recipes = EnumSet.allOf(Recipe.class);
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
          case "--curator-waiters" -> curatorWaiters = Integer.parseInt(value(args, ++i));
          case "--keyed-keys" -> keyedKeys = Integer.parseInt(value(args, ++i));
          case "--keyed-contended" -> keyedContended = Integer.parseInt(value(args, ++i));
          case "--update" -> update = true;
          case "--recipes" -> {
            recipes = EnumSet.noneOf(Recipe.class);
            for (String name : COMMA.split(value(args, ++i), -1)) {
              recipes.add(Recipe.valueOf(name.trim().replace('-', '_').toUpperCase(Locale.ROOT)));
            }
          }
          default ->
              throw new IllegalArgumentException(
                  "unknown option "
                      + args[i]
                      + "; use --quick | --full [--only s1,s2 [--update]] [--out DIR]"
                      + " [--curator-waiters N] [--keyed-keys N] [--keyed-contended M]"
                      + " [--recipes r1,r2]");
        }
      }
      if (update && recipes.size() != Recipe.values().length) {
        throw new IllegalArgumentException("--recipes prints some rows: it updates no block");
      }
      if (update) {
        List<String> notAlone =
            sections.stream().filter(s -> s.ownBlock == null).map(Section::option).toList();
        if (sections.size() == Section.values().length || !notAlone.isEmpty()) {
          throw new IllegalArgumentException(
              "--update replaces the blocks of sections that say their own run ("
                  + Arrays.stream(Section.values())
                      .filter(s -> s.ownBlock != null)
                      .map(Section::option)
                      .collect(Collectors.joining(", "))
                  + "), named with --only; not "
                  + (sections.size() == Section.values().length
                      ? "the whole suite"
                      : String.join(", ", notAlone)));
        }
      }
      if (curatorWaiters >= 0) {
        settings = settings.withCuratorWaitersMax(curatorWaiters);
      }
      String given = String.join(" ", args).trim();
      String command =
          "mvn -B -Pbench verify" + (given.isEmpty() ? "" : " -Dbench.args=\"" + given + "\"");
      return new Arguments(
          settings, sections, out, outGiven, update, recipes, keyedKeys, keyedContended, command);
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
    if (arguments.sections().contains(Section.UNREACHABLE)) {
      // that section cuts its clients off on purpose: every reconnection attempt would warn
      System.setProperty("org.slf4j.simpleLogger.log.org.apache.zookeeper.ClientCnxn", "error");
    }
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
      SectionRuns runs = new SectionRuns(probe, connect, settings, results);
      List<SuiteResults.Row> uncontended = new ArrayList<>();
      if (sections.contains(Section.UNCONTENDED)) {
        uncontended.addAll(SectionRuns.rows(false));
      }
      if (sections.contains(Section.MULTI)) {
        uncontended.addAll(SectionRuns.rows(true));
      }
      uncontended.removeIf(row -> !arguments.recipes().contains(row.recipe()));
      if (!uncontended.isEmpty()) {
        runs.uncontended(uncontended);
      }
      if (sections.contains(Section.SLOW_LINK)) {
        SlowLinkRuns.run(connect, settings, results);
      }
      if (sections.contains(Section.RECORDING)) {
        RecordingRuns.run(probe, connect, settings, results);
      }
      if (sections.contains(Section.HANDOFF)) {
        runs.handoff();
      }
      if (sections.contains(Section.WAITERS)) {
        runs.waiters();
      }
      if (sections.contains(Section.CONTENTION)) {
        runs.contention();
      }
      if (sections.contains(Section.WATCHES)) {
        runs.watches();
      }
      if (sections.contains(Section.COHORT)) {
        CohortRuns.run(probe, connect, settings, results);
      }
      if (sections.contains(Section.RW)) {
        runs.mixes();
      }
      if (sections.contains(Section.MULTI_CONTENTION)) {
        runs.multiContention();
      }
      if (sections.contains(Section.UNREACHABLE)) {
        runs.unreachable();
      }
      if (sections.contains(Section.SEMAPHORE_ELECTION)) {
        runs.semaphoreElection();
      }
      if (sections.contains(Section.LINGER)) {
        LingerRuns.run(probe, connect, results);
      }
      if (sections.contains(Section.KEYED)) {
        results.keyedRun =
            KeyedRuns.run(settings, arguments.keyedKeys(), arguments.keyedContended());
      }
      if (sections.contains(Section.FENCE)) {
        results.fenceRun = FenceRuns.run(settings);
      }
      if (sections.contains(Section.READSHARE)) {
        results.readShareRun = ReadShareScenario.run(probe, connect, settings);
      }

      Duration took = Duration.between(started, Instant.now());
      BenchmarkPage page =
          new BenchmarkPage(
              settings,
              machine,
              results,
              arguments.command(),
              date(started),
              took,
              loadBefore,
              MachineInfo.loadAverage());
      if (arguments.writesPage()) {
        Files.createDirectories(arguments.out());
        Path markdown = arguments.out().resolve("benchmarks.md");
        if (arguments.update()) {
          // only the charts of the sections run: of those that may be updated, the uncontended one
          BenchmarkCharts.write(results, arguments.out());
          Files.writeString(markdown, page.fill(template(markdown), arguments.blocks()));
          log(
              "updated "
                  + arguments.blocks()
                  + " in "
                  + markdown
                  + " in "
                  + took.toSeconds()
                  + " s");
        } else {
          BenchmarkCharts.write(results, arguments.out());
          Files.writeString(markdown, page.fill(template(markdown)));
          log("wrote " + markdown + " and charts in " + took.toSeconds() + " s");
        }
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

  /** An instant as the page writes it: "2026-11-25T14:57:52 UTC". */
  static String date(Instant instant) {
    return DateTimeFormatter.ISO_LOCAL_DATE_TIME
            .withZone(ZoneOffset.UTC)
            .format(instant.truncatedTo(ChronoUnit.SECONDS))
        + " UTC";
  }

  private static void log(String message) {
    System.out.println("[bench] " + message);
  }
}

package io.lockstep.bench;

import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The generated part of the benchmark page, {@code docs/benchmarks.md}: the run's machine and
 * settings, the goals met or missed ({@link GoalVerdicts}), every section's table of Curator's
 * figure, ours and the ratio, and the misses with the reason each points to. Everything else on the
 * page, what each section measures and what each reason means, is written by hand in the page; the
 * suite replaces only the text between each block's markers ({@link #fill}).
 */
final class BenchmarkPage {
  /** The generated blocks, in page order. */
  enum Block {
    RUN,
    GOALS,
    UNCONTENDED,
    SLOW_LINK,
    RECORDING,
    HANDOFF,
    WAITERS,
    CONTENTION,
    COHORT,
    WATCHES,
    MIXES,
    MULTI_CONTENTION,
    UNREACHABLE,
    SEMAPHORE_ELECTION,
    LINGER,
    KEYED,
    FENCE,
    READSHARE,
    MISSED;

    /** The block's name in its markers: "run", "multi-contention". */
    String id() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    String begin() {
      return "<!-- BEGIN GENERATED " + id() + ": written by BenchmarkSuite, do not edit -->";
    }

    String end() {
      return "<!-- END GENERATED " + id() + " -->";
    }
  }

  private static final Pattern LEADING_NUMBER_END = Pattern.compile("[ /]+");

  private final SuiteSettings settings;
  private final MachineInfo machine;
  private final SuiteResults results;
  private final String command;
  private final String date;
  private final Duration took;
  private final String loadBefore;
  private final String loadAfter;

  BenchmarkPage(
      SuiteSettings settings,
      MachineInfo machine,
      SuiteResults results,
      String command,
      String date,
      Duration took,
      String loadBefore,
      String loadAfter) {
    this.settings = settings;
    this.machine = machine;
    this.results = results;
    this.command = command;
    this.date = date;
    this.took = took;
    this.loadBefore = loadBefore;
    this.loadAfter = loadAfter;
  }

  /**
   * Replaces the text between each block's markers in {@code template} with this run's.
   *
   * @throws IllegalArgumentException if a block's markers are missing or out of order
   */
  String fill(String template) {
    return fill(template, EnumSet.allOf(Block.class));
  }

  /**
   * Replaces the text between the markers of the given blocks only, leaving the others as they are
   * in {@code template}: for a run of sections whose blocks say their own run ({@code --update}).
   *
   * @throws IllegalArgumentException if a replaced block's markers are missing or out of order
   */
  String fill(String template, Set<Block> only) {
    String page = template;
    for (Map.Entry<Block, String> block : blocks().entrySet()) {
      if (!only.contains(block.getKey())) {
        continue;
      }
      String begin = block.getKey().begin();
      String end = block.getKey().end();
      int from = page.indexOf(begin);
      int to = page.indexOf(end);
      if (from < 0 || to < from || page.indexOf(begin, from + 1) >= 0) {
        throw new IllegalArgumentException("the page needs one '" + begin + "' ... '" + end + "'");
      }
      page =
          page.substring(0, from + begin.length()) + "\n" + block.getValue() + page.substring(to);
    }
    return page;
  }

  /** A page with every block under a bare heading, for a directory without a page to fill. */
  static String bareTemplate() {
    StringBuilder page = new StringBuilder("# Benchmarks: Lockstep side by side with Curator\n");
    for (Block block : Block.values()) {
      page.append("\n## ").append(block.id()).append("\n\n");
      page.append(block.begin()).append('\n').append(block.end()).append('\n');
    }
    return page.toString();
  }

  /** Every block's content, in page order. */
  Map<Block, String> blocks() {
    GoalVerdicts.Verdicts verdicts = GoalVerdicts.judge(results);
    SectionTables sections = new SectionTables(settings, results);
    VariantTables variants = new VariantTables(results);
    WaiterTables waiting = new WaiterTables(settings, results);
    Map<Block, String> blocks = new EnumMap<>(Block.class);
    blocks.put(Block.RUN, run());
    blocks.put(Block.GOALS, orNotRun(GoalTables.goals(verdicts)));
    blocks.put(Block.UNCONTENDED, orNotRun(sections.uncontended(command, machine.cores())));
    blocks.put(Block.SLOW_LINK, orNotRun(variants.slowLink()));
    blocks.put(Block.RECORDING, orNotRun(variants.recording()));
    blocks.put(Block.HANDOFF, orNotRun(sections.handoff()));
    blocks.put(Block.WAITERS, orNotRun(waiting.waiters()));
    blocks.put(Block.CONTENTION, orNotRun(sections.contention()));
    blocks.put(Block.COHORT, orNotRun(new CohortTables(results).cohort()));
    blocks.put(Block.WATCHES, orNotRun(waiting.watches()));
    blocks.put(Block.MIXES, orNotRun(sections.mixes()));
    blocks.put(Block.MULTI_CONTENTION, orNotRun(sections.multiContention()));
    blocks.put(
        Block.UNREACHABLE,
        orNotRun(new UnreachableTables(results).unreachable(command, machine.cores())));
    blocks.put(
        Block.SEMAPHORE_ELECTION,
        orNotRun(new SemaphoreElectionTables(results).block(command, machine.cores())));
    blocks.put(Block.LINGER, orNotRun(new LingerTables(results).block(command, machine.cores())));
    blocks.put(Block.KEYED, orNotRun(new KeyedTables(results).block(command, machine.cores())));
    blocks.put(Block.FENCE, orNotRun(new FenceTables(results).block(command, machine.cores())));
    blocks.put(
        Block.READSHARE, orNotRun(new ReadShareTables(results).block(command, machine.cores())));
    blocks.put(Block.MISSED, GoalTables.missed(verdicts));
    return blocks;
  }

  /**
   * The first line of a block that says its own run: when, how long, the command, the load around
   * it and whether the machine was shared ({@code cores}: the cores available to the JVM).
   */
  static String measuredLine(
      String started,
      Duration took,
      String command,
      String loadBefore,
      String loadAfter,
      int cores) {
    return String.format(
        Locale.ROOT,
        "Measured %s (%s): `%s`, from the repository root; load average before: %s, after: %s;"
            + " machine shared: %s.%n%n",
        started,
        Figures.minutes(took),
        command,
        loadBefore,
        loadAfter,
        shared(loadBefore, cores) ? "**yes**" : "no");
  }

  /** "3 warm-up and 5 measured iterations of 2 s, 1 fork". */
  static String jmhIterations(SuiteSettings settings) {
    return String.format(
        Locale.ROOT,
        "%d warm-up and %d measured iterations of %s, %s",
        settings.jmhWarmupIterations(),
        settings.jmhIterations(),
        Figures.seconds(settings.jmhIterationTime()),
        plural(settings.jmhForks(), "fork"));
  }

  /** A block's text, or a line saying the run did not measure it. */
  private static String orNotRun(String text) {
    return text.isEmpty() ? "*Not measured in this run.*\n" : text;
  }

  private String run() {
    MarkdownTable table = new MarkdownTable("", "");
    table.row("Date", date + ", " + settings.mode() + " mode, " + Figures.minutes(took));
    table.row("Command", "`" + command + "` (from the repository root)");
    table.row("CPU", machine.cpu() + ", " + machine.cores() + " cores available to the JVM");
    table.row("Memory", Figures.gibibytes(machine.memoryGib()));
    table.row("OS", machine.os());
    table.row("JVM", machine.jvm());
    table.row("ZooKeeper", machine.zookeeper());
    table.row("Curator", machine.curator());
    table.row("Load average (1 / 5 / 15 min)", "before: " + loadBefore + "; after: " + loadAfter);
    table.row("Machine shared", shared(loadBefore, machine.cores()) ? "**yes**" : "no");
    table.row("JMH", jmhIterations(settings));
    table.row("Cycles counted per row", String.valueOf(settings.countedCycles()));
    table.row(
        "Handoff",
        String.format(
            Locale.ROOT,
            "N = %s waiters over %d sessions; %s",
            join(settings.queueLengths()),
            settings.handoffSessions(),
            drains(settings)));
    table.row(
        "Load points",
        Figures.seconds(settings.loadWarmup())
            + " warm-up, "
            + Figures.seconds(settings.loadMeasured())
            + " measured, one run each");
    table.row(
        "Threads",
        String.format(
            Locale.ROOT,
            "contention: T = %s; read-write mixes: %d; multi-lock contention: %d, each multi-lock"
                + " on K = %d of P = %d paths",
            join(settings.threadCounts()),
            settings.mixThreads(),
            settings.multiThreads(),
            settings.multiK(),
            settings.multiPaths()));
    table.row(
        "Slow link",
        "`TcpProxy` between the benchmark's client and the server, adding "
            + settings.roundTrips().stream()
                .map(SlowLinkRuns::label)
                .collect(Collectors.joining(" and "))
            + " to each round trip (half each way); rows: "
            + labels(settings.slowLinkRows()));
    table.row(
        "Flight Recorder",
        "`-XX:StartFlightRecording` with the JDK's `default` settings in the benchmark's JVM; rows: "
            + labels(settings.recordingRows()));
    table.row(
        "Many waiters",
        String.format(
            Locale.ROOT,
            "N = %s on one lock and one client, in a JVM of its own (`-Xmx%s`, G1); Curator up to N"
                + " = %s; each run stopped after %s",
            settings.waiterCounts().stream().map(Figures::number).collect(Collectors.joining(", ")),
            WaitersScenario.HEAP,
            Figures.number(settings.curatorWaitersMax()),
            Figures.minutes(settings.waitersTimeout())));
    table.row(
        "Watch events",
        String.format(
            Locale.ROOT,
            "%d threads × %d acquisitions, a client each, then one shared client",
            settings.watchClients(),
            settings.watchAcquisitions()));
    return table.render();
  }

  private static String labels(List<SuiteResults.Row> rows) {
    return rows.stream().map(SuiteResults.Row::label).collect(Collectors.joining("; "));
  }

  /** "median of 15 / 3 / 3 drains per point, each library first in turn", or one drain. */
  private static String drains(SuiteSettings settings) {
    List<Integer> repeats = settings.queueLengths().stream().map(settings::handoffRepeats).toList();
    if (repeats.stream().allMatch(r -> r == 1)) {
      return "one drain per point";
    }
    String counts =
        repeats.stream().distinct().count() == 1
            ? String.valueOf(repeats.get(0))
            : repeats.stream().map(String::valueOf).collect(Collectors.joining(" / "));
    return "median of " + counts + " drains per point, each library first in turn";
  }

  private static String join(List<Integer> values) {
    return values.stream().map(String::valueOf).collect(Collectors.joining(", "));
  }

  private static String plural(int count, String noun) {
    return count + " " + noun + (count == 1 ? "" : "s");
  }

  /**
   * Whether a load average ("1.23 / 1.41 / 1.38") says the machine was shared: at least half the
   * cores busy with other processes over the last minute.
   */
  static boolean shared(String loadAverage, int cores) {
    return firstNumber(loadAverage) >= cores * 0.5;
  }

  private static double firstNumber(String text) {
    try {
      return Double.parseDouble(LEADING_NUMBER_END.split(text.trim(), 2)[0]);
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}

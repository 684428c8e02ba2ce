package io.lockstep.demo;

import io.lockstep.testing.Ensemble;
import io.lockstep.testing.Library;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;

/**
 * The Lockstep demo: a bank-transfer workload on Lockstep's lock recipes against a three-server
 * ZooKeeper ensemble, with live progress, optional faults and a comparison with Curator's recipes;
 * and the {@code inspect} command, which prints who holds and who waits for a lock.
 *
 * <pre>
 * mvn -B -q -Pdemo verify                                       # 60 s on an embedded ensemble
 * mvn -B -q -Pdemo verify -Ddemo.args="--chaos --duration 90s"  # kill a server, expire a session
 * mvn -B -q -Pdemo verify -Ddemo.args="--compare-curator"       # the same on Curator's recipes
 * mvn -B -q -Pdemo verify -Ddemo.args="inspect --connect localhost:2181 /locks/orders"
 * </pre>
 *
 * <p>The workload is described in {@link Workload}, the faults in {@link Chaos}. The exit status is
 * 0 when every invariant held, 1 when one failed (a Curator run under {@code --chaos} excepted: its
 * writes cannot be fenced, and showing what that costs is the point of the comparison), 2 for a bad
 * command line and 3 when ZooKeeper could not be used.
 */
public final class Demo {
  static final int OK = 0;
  static final int INVARIANT_FAILED = 1;
  static final int USAGE = 2;
  static final int FAILED = 3;

  private Demo() {}

  /**
   * Runs the demo and exits with its status.
   *
   * @param args the command line; {@code --help} describes it
   */
  public static void main(String[] args) {
    quietLogging();
    System.exit(run(args, System.out, System.err, isTerminal()));
  }

  /** Runs the demo as the command line asks and returns the exit status. */
  static int run(String[] args, PrintStream out, PrintStream err, boolean live) {
    DemoOptions options;
    try {
      options = DemoOptions.parse(args);
    } catch (IllegalArgumentException e) {
      err.println("demo: " + e.getMessage());
      err.println();
      err.println(DemoOptions.USAGE);
      return USAGE;
    }
    try {
      return switch (options.command()) {
        case HELP -> {
          out.println(DemoOptions.USAGE);
          yield OK;
        }
        case INSPECT -> inspect(options, out);
        case RUN -> runWorkloads(options, out, live);
      };
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("demo: interrupted");
      return FAILED;
    } catch (Exception e) {
      err.println("demo: failed: " + (e.getMessage() == null ? e.toString() : e.getMessage()));
      return FAILED;
    }
  }

  private static int inspect(DemoOptions options, PrintStream out) throws Exception {
    try (CuratorFramework client = Ensemble.external(options.connect()).newClient()) {
      Inspect.lines(client, options.paths()).forEach(out::println);
    }
    return OK;
  }

  private static int runWorkloads(DemoOptions options, PrintStream out, boolean live)
      throws Exception {
    Console console = new Console(out, live);
    Ensemble ensemble;
    if (options.embedded()) {
      console.line("Starting an embedded 3-server ZooKeeper ensemble...");
      long begin = System.nanoTime();
      ensemble = Ensemble.embedded(3, Ensemble.ClientSettings.DEMO);
      console.line(
          "Ensemble up at "
              + ensemble.connectString()
              + " in "
              + Report.seconds(System.nanoTime() - begin));
    } else {
      ensemble = Ensemble.external(options.connect());
    }
    try (ensemble) {
      List<RunResult> results = runWorkloads(options, ensemble, console);
      Report.lines(options, ensemble.description(), results).forEach(console::line);
      int status = exitStatus(options, results);
      console.line("");
      console.line(verdict(options, results));
      return status;
    }
  }

  /** Runs the workload on Lockstep's recipes, then on Curator's if asked; prints progress. */
  static List<RunResult> runWorkloads(DemoOptions options, Ensemble ensemble, Console console)
      throws Exception {
    List<Library> runs = new ArrayList<>(List.of(Library.LOCKSTEP));
    if (options.compareCurator()) {
      runs.add(Library.CURATOR);
    }
    List<RunResult> results = new ArrayList<>();
    for (int i = 0; i < runs.size(); i++) {
      Library library = runs.get(i);
      console.line("");
      console.line(
          String.format(
              "Run %d of %d: %s recipes, %d instances x %d threads, %d accounts, %s%s",
              i + 1,
              runs.size(),
              library.label(),
              options.instances(),
              options.threads(),
              options.accounts(),
              Report.seconds(options.duration().toNanos()),
              options.chaos() ? ", chaos" : ""));
      results.add(new Workload(options, ensemble, library, console).run());
    }
    return results;
  }

  /**
   * 0 when every run's invariants held, else 1; a Curator run under chaos may break them without
   * failing the demo, since its writes cannot be fenced.
   */
  static int exitStatus(DemoOptions options, List<RunResult> results) {
    for (RunResult result : results) {
      if (!result.held() && (result.fenced() || !options.chaos())) {
        return INVARIANT_FAILED;
      }
    }
    return OK;
  }

  private static String verdict(DemoOptions options, List<RunResult> results) {
    List<String> lines = new ArrayList<>();
    for (RunResult result : results) {
      String broken =
          result.invariants().stream()
              .filter(invariant -> !invariant.held())
              .map(invariant -> "'" + invariant.name() + "'")
              .collect(Collectors.joining(", "));
      if (broken.isEmpty()) {
        lines.add(result.library() + ": every invariant held.");
      } else if (!result.fenced() && options.chaos()) {
        lines.add(
            result.library()
                + ": broke "
                + broken
                + " under --chaos: its locks do not notice a lost session and its writes are"
                + " unfenced. (Expected; not counted in the exit status.)");
      } else {
        lines.add(result.library() + ": FAILED " + broken + ".");
      }
    }
    return "Result: " + String.join("\n        ", lines);
  }

  /** Keeps ZooKeeper's and Curator's logging off the demo's screen; Lockstep's errors show. */
  private static void quietLogging() {
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "off");
      System.setProperty("org.slf4j.simpleLogger.log.io.lockstep", "error");
    }
  }

  /** Whether standard output seems to be a terminal that redraws a line on a carriage return. */
  private static boolean isTerminal() {
    if (System.console() != null) {
      return true;
    }
    String term = System.getenv("TERM");
    return System.getenv("CI") == null && term != null && !term.equals("dumb");
  }
}

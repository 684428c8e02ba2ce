package io.lockstep.demo;

import io.lockstep.testing.Ensemble;
import io.lockstep.testing.Library;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;

/**
 * The Lockstep demo: a bank-transfer workload on Lockstep's lock recipes against a three-server
 * ZooKeeper ensemble, with a fault phase a third of the way in, live progress, the Micrometer
 * figures and a Flight Recording of the run, and optionally a comparison with Curator's recipes;
 * and the {@code inspect} command, which prints who holds and who waits for a lock.
 *
 * <pre>
 * mvn -B -q -Pdemo verify                                       # 45 s on an embedded ensemble
 * mvn -B -q -Pdemo verify -Ddemo.args="--no-faults"             # a quiet run
 * mvn -B -q -Pdemo verify -Ddemo.args="--compare-curator"       # the same on Curator's recipes
 * mvn -B -q -Pdemo verify -Ddemo.args="inspect --connect localhost:2181 /locks/orders"
 * </pre>
 *
 * <p>The workload is described in {@link Workload}, the faults in {@link FaultPhase}. The exit
 * status is 0 when every invariant held, 1 when one failed (a Curator run with faults excepted: its
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

  /**
   * Runs the demo as the command line asks and returns the exit status.
   *
   * @param terminal whether {@code out} is a terminal (the progress line is then redrawn in place,
   *     unless {@code --progress} says otherwise)
   */
  static int run(String[] args, PrintStream out, PrintStream err, boolean terminal) {
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
        case RUN -> runWorkloads(options, out, terminal);
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

  private static int runWorkloads(DemoOptions options, PrintStream out, boolean terminal)
      throws Exception {
    Console console = new Console(out, options.progress().live(terminal));
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
      return runAndReport(options, ensemble, console).status();
    }
  }

  /**
   * What a run of the demo came to.
   *
   * @param status the exit status
   * @param results each workload run's
   * @param recording the Flight Recording written, if one was
   */
  record Outcome(int status, List<RunResult> results, Optional<FlightRecording.Written> recording) {
    Outcome {
      results = List.copyOf(results);
    }
  }

  /**
   * Says what is about to run, runs it under a Flight Recording, and prints the summary, the
   * Micrometer figures, where the recording is and the verdict.
   */
  static Outcome runAndReport(DemoOptions options, Ensemble ensemble, Console console)
      throws Exception {
    console.line("");
    Report.intro(options, ensemble.canKillServers()).forEach(console::line);
    FlightRecording recording = startRecording(options, console);
    List<RunResult> results;
    Optional<FlightRecording.Written> written = Optional.empty();
    try {
      results = runWorkloads(options, ensemble, console);
      if (recording != null) {
        try {
          written = Optional.of(recording.stop());
        } catch (IOException | RuntimeException e) {
          console.line("demo: could not write the Flight Recording to " + options.jfr() + ": " + e);
        }
      }
    } finally {
      if (recording != null) {
        recording.close();
      }
    }
    Report.lines(options, ensemble.description(), results).forEach(console::line);
    if (written.isPresent()) {
      console.line("");
      written.get().lines().forEach(console::line);
    }
    int status = exitStatus(options, results);
    console.line("");
    console.line(verdict(options, results));
    return new Outcome(status, results, written);
  }

  private static FlightRecording startRecording(DemoOptions options, Console console) {
    if (options.jfr() == null) {
      return null;
    }
    try {
      return FlightRecording.start(options.jfr());
    } catch (Exception | LinkageError e) {
      console.line("demo: no Flight Recording of this run: " + e);
      return null;
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
              options.faults() ? ", fault phase" : ", no faults"));
      results.add(new Workload(options, ensemble, library, console).run());
    }
    return results;
  }

  /**
   * 0 when every run's invariants held, else 1; a Curator run with faults may break them without
   * failing the demo, since its writes cannot be fenced.
   */
  static int exitStatus(DemoOptions options, List<RunResult> results) {
    for (RunResult result : results) {
      if (!result.held() && (result.fenced() || !options.faults())) {
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
      } else if (!result.fenced() && options.faults()) {
        lines.add(
            result.library()
                + ": broke "
                + broken
                + " in the fault phase: its locks do not notice a lost session and its writes are"
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

  /**
   * Whether standard input and output are a terminal, that redraws a line on a carriage return:
   * {@link System#console()} is null otherwise (run by Maven, the demo inherits Maven's streams).
   * From Java 22 on a console may be returned for a pipe too, and {@code
   * java.io.Console.isTerminal()} tells.
   */
  static boolean isTerminal() {
    java.io.Console console = System.console();
    if (console == null) {
      return false;
    }
    try {
      Method isTerminal = java.io.Console.class.getMethod("isTerminal");
      return Boolean.TRUE.equals(isTerminal.invoke(console));
    } catch (NoSuchMethodException beforeJava22) {
      return true;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return false;
    }
  }
}

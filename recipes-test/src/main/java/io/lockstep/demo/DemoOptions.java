package io.lockstep.demo;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The demo's command line, parsed and checked: which command to run and with what settings.
 *
 * @param command what to do
 * @param duration how long each workload run lasts
 * @param instances simulated service instances, each with its own client and session
 * @param threads worker threads per instance
 * @param accounts bank accounts in the demo's database
 * @param faults whether the run has its fault phase: a server killed and restarted, a lock holder's
 *     session expired ({@link FaultPhase})
 * @param connect the ensemble to use, or null to start an embedded one
 * @param compareCurator whether to run the workload on Curator's recipes too
 * @param progress how the progress line is shown
 * @param jfr where to write the Flight Recording of the run, or null for none
 * @param paths the lock paths to inspect (the {@code inspect} command)
 */
record DemoOptions(
    Command command,
    Duration duration,
    int instances,
    int threads,
    int accounts,
    boolean faults,
    String connect,
    boolean compareCurator,
    ProgressMode progress,
    Path jfr,
    List<String> paths) {

  /** What the demo was asked to do. */
  enum Command {
    RUN,
    INSPECT,
    HELP
  }

  /** How the progress line is shown. */
  enum ProgressMode {
    /** Redrawn in place if standard output is a terminal, else printed as plain lines. */
    AUTO,
    /** Redrawn in place with a carriage return. */
    LIVE,
    /** Printed as plain lines, every few seconds (for logs). */
    LINES;

    /** Whether the line is redrawn in place, given whether the output is a terminal. */
    boolean live(boolean terminal) {
      return this == LIVE || (this == AUTO && terminal);
    }
  }

  /**
   * Where the Flight Recording goes unless {@code --jfr} says otherwise: the system property {@code
   * lockstep.demo.jfr} (Maven sets it to the module's {@code target/}), else {@code
   * target/lockstep-demo.jfr}.
   */
  static Path defaultJfr() {
    return Path.of(System.getProperty("lockstep.demo.jfr", "target/lockstep-demo.jfr"));
  }

  static final String USAGE =
      String.join(
          "\n",
          "Usage:",
          "  mvn -B -q -Pdemo verify [-Ddemo.args=\"OPTIONS\"]",
          "  mvn -B -q -Pdemo verify -Ddemo.args=\"inspect --connect HOST:PORT PATH...\"",
          "",
          "Runs a bank-transfer workload on Lockstep's lock recipes against a 3-server ZooKeeper",
          "ensemble, with a fault phase a third of the way in, and checks that money is",
          "conserved and no two holders ever overlap. Prints the Micrometer figures of the run",
          "and writes a JDK Flight Recording of it.",
          "",
          "Options:",
          "  --duration D        length of each run: 90s, 2m, 500ms (default 45s)",
          "  --instances N       service instances, each with its own client and session"
              + " (default 4)",
          "  --threads N         worker threads per instance (default 4)",
          "  --accounts N        bank accounts (default 16)",
          "  --no-faults         a quiet run: no fault phase. By default, a third of the way in,",
          "                      the server of instance 1 is killed and restarted, then a lock",
          "                      holder stalls while its session is expired (--faults or",
          "                      --chaos: the default)",
          "  --connect HOST:PORT run against this ensemble instead of an embedded one",
          "                      (data under /lockstep-demo, removed afterwards; no server is",
          "                      killed, sessions still expire)",
          "  --compare-curator   run the same workload on Curator's recipes as well (each run",
          "                      lasts --duration) and print both side by side",
          "  --progress MODE     auto (default): the progress line is redrawn in place on a",
          "                      terminal, printed as plain lines otherwise (CI logs);",
          "                      live or lines force one or the other",
          "  --jfr FILE          where to write the Flight Recording of the run (default",
          "                      target/lockstep-demo.jfr, under recipes-test/ from Maven)",
          "  --no-jfr            record nothing",
          "  --help              print this text",
          "",
          "Commands:",
          "  inspect --connect HOST:PORT PATH...",
          "                      print the holders and waiters of each lock path (Lockstep's",
          "                      and Curator's lock nodes alike)",
          "",
          "Exit status: 0 when every invariant held, 1 when one failed, 2 for a bad command",
          "line, 3 when ZooKeeper could not be used.");

  private static final List<String> VALUED =
      List.of(
          "--duration",
          "--instances",
          "--threads",
          "--accounts",
          "--connect",
          "--progress",
          "--jfr");

  DemoOptions {
    paths = List.copyOf(paths);
  }

  /**
   * Parses a command line.
   *
   * @throws IllegalArgumentException with a message for the user when it is not valid
   */
  static DemoOptions parse(String... args) {
    Command command = Command.RUN;
    Duration duration = Duration.ofSeconds(45);
    int instances = 4;
    int threads = 4;
    int accounts = 16;
    boolean faults = true;
    String connect = null;
    boolean compareCurator = false;
    ProgressMode progress = ProgressMode.AUTO;
    Path jfr = defaultJfr();
    List<String> paths = new ArrayList<>();
    int i = 0;
    if (args.length > 0 && args[0].equals("inspect")) {
      command = Command.INSPECT;
      i = 1;
    }
    for (; i < args.length; i++) {
      String arg = args[i];
      String value = null;
      int equals = arg.indexOf('=');
      if (arg.startsWith("--") && equals > 0) {
        value = arg.substring(equals + 1);
        arg = arg.substring(0, equals);
      }
      if (arg.equals("--help") || arg.equals("-h")) {
        command = Command.HELP;
      } else if (arg.equals("--faults") || arg.equals("--chaos")) {
        faults = true;
      } else if (arg.equals("--no-faults")) {
        faults = false;
      } else if (arg.equals("--no-jfr")) {
        jfr = null;
      } else if (arg.equals("--compare-curator")) {
        compareCurator = true;
      } else if (VALUED.contains(arg)) {
        if (value == null) {
          if (i + 1 >= args.length) {
            throw new IllegalArgumentException(arg + " needs a value");
          }
          value = args[++i];
        }
        switch (arg) {
          case "--duration" -> duration = parseDuration(value);
          case "--instances" -> instances = parseCount(arg, value);
          case "--threads" -> threads = parseCount(arg, value);
          case "--accounts" -> accounts = parseCount(arg, value);
          case "--progress" -> progress = parseProgress(value);
          case "--jfr" -> jfr = Path.of(value);
          default -> connect = value;
        }
      } else if (arg.startsWith("-")) {
        throw new IllegalArgumentException("unknown option " + arg);
      } else if (command == Command.INSPECT) {
        paths.add(arg);
      } else {
        throw new IllegalArgumentException("unexpected argument " + arg);
      }
    }
    DemoOptions options =
        new DemoOptions(
            command,
            duration,
            instances,
            threads,
            accounts,
            faults,
            connect,
            compareCurator,
            progress,
            jfr,
            paths);
    options.check();
    return options;
  }

  private void check() {
    if (command == Command.HELP) {
      return;
    }
    if (command == Command.INSPECT) {
      if (connect == null) {
        throw new IllegalArgumentException("inspect needs --connect HOST:PORT");
      }
      if (paths.isEmpty()) {
        throw new IllegalArgumentException("inspect needs at least one lock path");
      }
      for (String path : paths) {
        if (!path.startsWith("/")) {
          throw new IllegalArgumentException("lock paths are absolute: " + path);
        }
      }
      return;
    }
    if (instances < 1 || threads < 1) {
      throw new IllegalArgumentException("--instances and --threads must be at least 1");
    }
    if (accounts < 2) {
      throw new IllegalArgumentException("--accounts must be at least 2");
    }
    if (duration.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("--duration must be at least 1s");
    }
  }

  /** Whether the run uses an ensemble it starts itself. */
  boolean embedded() {
    return connect == null;
  }

  /** Reads {@code 90s}, {@code 2m}, {@code 500ms} or a plain number of seconds. */
  static Duration parseDuration(String text) {
    String value = text.trim().toLowerCase(Locale.ROOT);
    try {
      if (value.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(value.substring(0, value.length() - 2)));
      }
      if (value.endsWith("s")) {
        return Duration.ofSeconds(Long.parseLong(value.substring(0, value.length() - 1)));
      }
      if (value.endsWith("m")) {
        return Duration.ofMinutes(Long.parseLong(value.substring(0, value.length() - 1)));
      }
      return Duration.ofSeconds(Long.parseLong(value));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a duration: " + text + " (try 90s, 2m or 500ms)");
    }
  }

  private static ProgressMode parseProgress(String text) {
    try {
      return ProgressMode.valueOf(text.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--progress is auto, live or lines, not " + text);
    }
  }

  private static int parseCount(String option, String text) {
    try {
      return Integer.parseInt(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " needs a whole number, not " + text);
    }
  }
}

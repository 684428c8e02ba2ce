package io.lockstep.recipes.locks;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

/**
 * The inspector as a command ({@link LockInspector#main(String[])}): parses the arguments, connects
 * within a bounded time, lists every lock under the root as a table or as JSON. Returns the exit
 * code: 0 done, 1 ZooKeeper not reached or not read, 2 bad arguments.
 */
final class InspectorCommand {
  static final int OK = 0;
  static final int UNREACHABLE = 1;
  static final int BAD_ARGUMENTS = 2;

  private static final int MAX_TABLE_DATA = 40;
  private static final String USAGE =
      String.join(
          "\n",
          "Usage: LockInspector <connect string> <root> [--json] [--namespace <namespace>]"
              + " [--timeout <seconds>]",
          "Lists every lock at or under <root>: holders and waiters, their sessions, ages and data.",
          "  <connect string>  the ensemble, e.g. zk1:2181,zk2:2181",
          "  <root>            the path to walk from, e.g. /locks (\"/\" for the whole tree)",
          "  --json            JSON instead of a table",
          "  --namespace <ns>  the Curator namespace the locks' clients use",
          "  --timeout <s>     how long to wait for ZooKeeper, in seconds (default 10)",
          "Exit status: 0 done, 1 ZooKeeper not reached or not read, 2 bad arguments.");

  private InspectorCommand() {}

  /** The parsed arguments. */
  private record Options(
      String connectString, String root, boolean json, String namespace, int timeoutSeconds) {}

  /**
   * Runs the command as a process does ({@link LockInspector#main(String[])}): the table, the JSON
   * or the usage goes to the process's standard output, written to its file descriptor; and {@code
   * System.out} is pointed at standard error first, before any class that logs (Curator's,
   * ZooKeeper's) is initialised, so that a logging configuration that writes to the console writes
   * to standard error: logback's default and Spring Boot's console appender write through {@code
   * System.out} at each event, log4j2's console appender takes {@code System.out} when it is made
   * (unless configured {@code direct}), slf4j-simple writes to standard error anyway. With a Spring
   * Boot application's class path, {@code --json} thus prints JSON alone on standard output.
   *
   * @return the exit code
   */
  static int main(String[] args) {
    PrintStream stdout =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, stdoutCharset());
    System.setOut(System.err);
    return run(args, stdout, System.err);
  }

  /** The encoding the JVM gave {@code System.out}: the console's, else the default. */
  private static Charset stdoutCharset() {
    for (String property : List.of("stdout.encoding", "sun.stdout.encoding")) {
      String name = System.getProperty(property);
      if (name != null && Charset.isSupported(name)) {
        return Charset.forName(name);
      }
    }
    return Charset.defaultCharset();
  }

  /** Runs the command, printing to {@code out} and {@code err}, and returns the exit code. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    Options options;
    try {
      options = parse(List.of(args));
    } catch (IllegalArgumentException e) {
      err.println("LockInspector: " + e.getMessage());
      err.println(USAGE);
      return BAD_ARGUMENTS;
    }
    if (options == null) {
      out.println(USAGE);
      return OK;
    }
    int timeoutMs = (int) TimeUnit.SECONDS.toMillis(options.timeoutSeconds());
    try (CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString(options.connectString())
            .namespace(options.namespace())
            .connectionTimeoutMs(timeoutMs)
            .sessionTimeoutMs(Math.max(timeoutMs, 10_000))
            .retryPolicy(new RetryNTimes(1, 100))
            .build()) {
      client.start();
      if (!client.blockUntilConnected(timeoutMs, TimeUnit.MILLISECONDS)) {
        err.println(
            "LockInspector: could not reach ZooKeeper at "
                + options.connectString()
                + " within "
                + options.timeoutSeconds()
                + " s");
        return UNREACHABLE;
      }
      List<LockInspector.Snapshot> locks = new LockInspector(client).inspectTree(options.root());
      out.print(options.json() ? json(options, locks) : table(options, locks));
      out.flush();
      return OK;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("LockInspector: interrupted");
      return UNREACHABLE;
    } catch (LockException | IllegalStateException e) {
      err.println("LockInspector: " + e.getMessage());
      return UNREACHABLE;
    }
  }

  /** The options, or null for {@code --help}. */
  private static Options parse(List<String> args) {
    List<String> positional = new ArrayList<>();
    boolean json = false;
    String namespace = null;
    int timeout = 10;
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      switch (arg) {
        case "--help", "-h" -> {
          return null;
        }
        case "--json" -> json = true;
        case "--namespace" -> namespace = valueOf(args, ++i, arg);
        case "--timeout" -> timeout = seconds(valueOf(args, ++i, arg));
        default -> {
          if (arg.startsWith("-")) {
            throw new IllegalArgumentException("unknown option: " + arg);
          }
          positional.add(arg);
        }
      }
    }
    if (positional.size() < 2) {
      throw new IllegalArgumentException(
          positional.isEmpty() ? "<connect string> is missing" : "<root> is missing");
    }
    if (positional.size() > 2) {
      throw new IllegalArgumentException("unexpected argument: " + positional.get(2));
    }
    String root = positional.get(1);
    try {
      Arguments.path(root, "root");
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("<root> '" + root + "': " + e.getMessage(), e);
    }
    return new Options(positional.get(0), root, json, namespace, timeout);
  }

  private static String valueOf(List<String> args, int index, String option) {
    if (index >= args.size()) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args.get(index);
  }

  private static int seconds(String text) {
    try {
      int seconds = Integer.parseInt(text);
      if (seconds > 0 && seconds <= 3_600) {
        return seconds;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException("--timeout must be 1 to 3600 seconds: " + text);
  }

  // ---- output ----

  private static String table(Options options, List<LockInspector.Snapshot> locks) {
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "%d lock%s under %s%n",
            locks.size(),
            plural(locks.size()),
            options.root()));
    for (LockInspector.Snapshot lock : locks) {
      int holders = lock.holders().size();
      int waiters = lock.waiters().size();
      out.append(
          String.format(
              Locale.ROOT,
              "%n%s: %d holder%s, %d waiter%s%n",
              lock.path(),
              holders,
              plural(holders),
              waiters,
              plural(waiters)));
      List<String[]> rows = new ArrayList<>();
      rows.add(new String[] {"role", "mode", "node", "session", "age", "data"});
      lock.holders().forEach(entry -> rows.add(row("holder", lock.path(), entry)));
      lock.waiters().forEach(entry -> rows.add(row("waiter", lock.path(), entry)));
      int[] widths = new int[rows.get(0).length];
      rows.forEach(
          row -> {
            for (int i = 0; i < row.length; i++) {
              widths[i] = Math.max(widths[i], row[i].length());
            }
          });
      for (String[] row : rows) {
        StringBuilder line = new StringBuilder("  ");
        for (int i = 0; i < row.length; i++) {
          line.append(row[i]).append(" ".repeat(widths[i] - row[i].length() + 2));
        }
        out.append(line.toString().stripTrailing()).append(System.lineSeparator());
      }
    }
    return out.toString();
  }

  private static String[] row(String role, String path, LockInspector.Entry entry) {
    String node =
        entry.node().startsWith(path + "/")
            ? entry.node().substring(path.length() + 1)
            : entry.node();
    String data = text(entry.data());
    data = data != null ? data : "base64:" + Base64.getEncoder().encodeToString(entry.data());
    if (data.length() > MAX_TABLE_DATA) {
      data = data.substring(0, MAX_TABLE_DATA - 3) + "...";
    }
    return new String[] {
      role, entry.mode().name(), node, session(entry.sessionId()), age(entry.age()), data
    };
  }

  private static String json(Options options, List<LockInspector.Snapshot> locks) {
    JsonWriter json = new JsonWriter().beginObject();
    json.name("root").value(options.root()).name("locks").beginArray();
    for (LockInspector.Snapshot lock : locks) {
      json.beginObject().name("path").value(lock.path());
      entries(json.name("holders"), lock.holders());
      entries(json.name("waiters"), lock.waiters());
      json.endObject();
    }
    return json.endArray().endObject() + System.lineSeparator();
  }

  private static void entries(JsonWriter json, List<LockInspector.Entry> entries) {
    json.beginArray();
    for (LockInspector.Entry entry : entries) {
      String text = text(entry.data());
      json.beginObject()
          .name("node")
          .value(entry.node())
          .name("mode")
          .value(entry.mode().name())
          .name("sessionId")
          .value(entry.sessionId() == 0 ? null : session(entry.sessionId()))
          .name("ageMillis")
          .value(entry.age().toMillis())
          .name("data")
          .value(text != null ? text : Base64.getEncoder().encodeToString(entry.data()))
          .name("dataEncoding")
          .value(text != null ? "utf-8" : "base64")
          .endObject();
    }
    json.endArray();
  }

  /** The data as text if it is valid UTF-8 without control characters, else null. */
  static String text(byte[] data) {
    String text = new String(data, StandardCharsets.UTF_8); // malformed bytes become U+FFFD
    boolean valid = Arrays.equals(text.getBytes(StandardCharsets.UTF_8), data);
    return valid && text.chars().noneMatch(Character::isISOControl) ? text : null;
  }

  private static String session(long sessionId) {
    return sessionId == 0 ? "-" : "0x" + Long.toHexString(sessionId);
  }

  private static String age(Duration age) {
    double seconds = age.toMillis() / 1e3;
    if (seconds < 60) {
      return String.format(Locale.ROOT, "%.1f s", seconds);
    }
    if (seconds < 3_600) {
      return String.format(Locale.ROOT, "%.1f min", seconds / 60);
    }
    return seconds < 86_400
        ? String.format(Locale.ROOT, "%.1f h", seconds / 3_600)
        : String.format(Locale.ROOT, "%.1f d", seconds / 86_400);
  }

  private static String plural(int count) {
    return count == 1 ? "" : "s";
  }
}

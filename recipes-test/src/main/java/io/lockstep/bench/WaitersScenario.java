package io.lockstep.bench;

import io.lockstep.testing.Library;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Many waiters on one lock through one client: N = 1,000 and 10,000 waiters queue behind a hold of
 * the same process, then the queue drains. Lockstep's waiters are {@code acquireAsync()} calls (no
 * thread waits), each grant closing its hold; Curator's are a thread each, blocked in {@code
 * InterProcessMutex.acquire()} (its only way to wait), up to the largest N the settings give it.
 * The client runs in a JVM of its own ({@link WaitersProcess}), so that its heap and threads are
 * measured apart from the server's.
 *
 * <p>Measured: time to queue (from the first call until the server holds N more nodes and N more
 * watches), heap per waiter (used heap after a full collection, queued minus before, divided by N:
 * everything the client keeps per waiter, thread objects included, thread stacks not, as they are
 * off the heap), threads per waiter (live threads, queued minus before, divided by N), time to
 * drain (from the holder's release to the last grant), and the requests and response bytes of the
 * drain.
 *
 * <p><b>Command</b> (from the repository root; prints the results and leaves {@code docs/} alone):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--full --only waiters"
 * </pre>
 */
final class WaitersScenario {
  private static final Pattern SPACE = Pattern.compile(" ");

  /** The client JVM's largest heap. */
  static final String HEAP = "4g";

  /**
   * One run of one library at one N.
   *
   * @param library whose lock
   * @param waiters N
   * @param finished false if the run did not finish within the settings' time, and was stopped
   * @param values the figures the client's JVM reported, by name (see {@link WaitersProcess})
   */
  record Result(Library library, int waiters, boolean finished, Map<String, String> values) {

    double queueMillis() {
      return value("queueNanos") / 1e6;
    }

    double drainMillis() {
      return value("drainNanos") / 1e6;
    }

    /** Heap bytes per queued waiter. */
    double heapPerWaiter() {
      return (value("heapQueued") - value("heapBefore")) / waiters;
    }

    /** Live threads added per queued waiter. */
    double threadsPerWaiter() {
      return (value("threadsQueued") - value("threadsBefore")) / waiters;
    }

    /** The most live threads in the client's JVM while the waiters queued and drained. */
    double peakThreads() {
      return value("threadsPeak");
    }

    double requestsPerWaiter() {
      return value("requests") / waiters;
    }

    double responseBytesPerWaiter() {
      return value("responseBytes") / waiters;
    }

    /** Whether the grants came in queue order; null where the run cannot tell (threads race). */
    Boolean inOrder() {
      String order = values.get("inOrder");
      return order == null ? null : Boolean.valueOf(order);
    }

    /** A figure the client reported, NaN if missing (or the run was stopped). */
    double value(String name) {
      String value = values.get(name);
      return value == null ? Double.NaN : Double.parseDouble(value);
    }
  }

  private WaitersScenario() {}

  /** Runs {@code library}'s waiters in a JVM of their own, stopped after {@code timeout}. */
  static Result run(String connectString, Library library, int waiters, Duration timeout)
      throws IOException, InterruptedException {
    Path output = Files.createTempFile("lockstep-waiters-", ".txt");
    try {
      List<String> command =
          List.of(
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              "-Xmx" + HEAP,
              "-XX:+UseG1GC",
              "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
              "-cp",
              System.getProperty("java.class.path"),
              WaitersProcess.class.getName(),
              connectString,
              library.name(),
              String.valueOf(waiters),
              Paths.unique("waiters-" + waiters));
      Process process =
          new ProcessBuilder(command)
              .redirectOutput(output.toFile())
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly().waitFor();
        return new Result(library, waiters, false, Map.of());
      }
      if (process.exitValue() != 0) {
        throw new IllegalStateException(
            "the waiters' JVM ("
                + library
                + ", N = "
                + waiters
                + ") exited with "
                + process.exitValue());
      }
      return new Result(library, waiters, true, parse(Files.readAllLines(output)));
    } finally {
      Files.deleteIfExists(output);
    }
  }

  /** The figures of the line {@link WaitersProcess} prints. */
  static Map<String, String> parse(List<String> lines) {
    String line =
        lines.stream()
            .filter(l -> l.startsWith(WaitersProcess.PREFIX + " "))
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("the waiters' JVM printed no result"));
    Map<String, String> values = new HashMap<>();
    for (String pair : SPACE.split(line.substring(WaitersProcess.PREFIX.length() + 1), -1)) {
      int equals = pair.indexOf('=');
      if (equals > 0) {
        values.put(pair.substring(0, equals), pair.substring(equals + 1));
      }
    }
    return values;
  }
}

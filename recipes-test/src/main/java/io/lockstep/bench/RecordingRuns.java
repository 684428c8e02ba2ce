package io.lockstep.bench;

import io.lockstep.testing.Library;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.util.List;
import java.util.Locale;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

/**
 * What Lockstep's Flight Recorder events and observer point cost: the JMH benchmark of each row
 * without a recording (Lockstep's events off, no observer: the state every lock is in by default)
 * and with one ({@code -XX:StartFlightRecording} with the JDK's {@code default} settings, which
 * also switch Lockstep's events on), for both libraries: Curator's rows show what the recording
 * costs the JVM by itself. The recording's file is read afterwards, and Lockstep's events counted,
 * to show they were on. A counting pass, in the suite's JVM, counts Lockstep's requests per cycle
 * without and with a recording of its events.
 *
 * <p><b>Command</b> (from the repository root; prints the results and leaves {@code docs/} alone):
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.args="--full --only jfr"
 * </pre>
 */
final class RecordingRuns {
  /** Lockstep's events, as {@code jdk.jfr} names them. */
  static final List<String> EVENTS =
      List.of("io.lockstep.LockAcquire", "io.lockstep.LockHold", "io.lockstep.LockStateChange");

  private RecordingRuns() {}

  static void run(ServerProbe probe, String connect, SuiteSettings settings, SuiteResults results)
      throws Exception {
    Path scratch = Files.createTempDirectory("lockstep-bench-jfr-");
    try {
      for (SuiteResults.Row row : settings.recordingRows()) {
        SuiteResults.RecordingCount count = count(probe, connect, settings, row, scratch);
        results.recordingCounts.put(row, count);
        log(
            String.format(
                Locale.ROOT,
                "recording %s: %.2f requests per cycle without, %.2f with (%d events)",
                row.label(),
                count.without().requestsPerCycle(),
                count.with().requestsPerCycle(),
                count.events()));
        for (Library library : List.of(Library.LOCKSTEP, Library.CURATOR)) {
          for (boolean on : new boolean[] {false, true}) {
            Path file = scratch.resolve(library.name().toLowerCase(Locale.ROOT) + ".jfr");
            List<String> jvmArgs =
                on
                    ? List.of("-XX:StartFlightRecording=settings=default,filename=" + file)
                    : List.of();
            SuiteResults.Score score =
                JmhRuns.run(settings, row, connect, List.of(library), jvmArgs).get(library);
            long events = on ? events(file) : 0;
            Files.deleteIfExists(file);
            results.recording.add(new SuiteResults.RecordingPoint(row, library, on, score, events));
            log(
                String.format(
                    Locale.ROOT,
                    "recording %s %s %s: %.1f ± %.1f cycles/s, %d Lockstep events recorded",
                    row.label(),
                    library.label(),
                    on ? "on" : "off",
                    score.perSecond(),
                    score.error(),
                    events));
          }
        }
      }
    } finally {
      try (var files = Files.list(scratch)) {
        for (Path file : files.toList()) {
          Files.deleteIfExists(file);
        }
      }
      Files.deleteIfExists(scratch);
    }
  }

  /** Lockstep's requests per cycle of {@code row}, without and with a recording of its events. */
  private static SuiteResults.RecordingCount count(
      ServerProbe probe, String connect, SuiteSettings settings, SuiteResults.Row row, Path scratch)
      throws Exception {
    CycleCost without = cost(probe, connect, settings, row);
    Path file = scratch.resolve("counting.jfr");
    CycleCost with;
    try (Recording recording = new Recording(defaultSettings())) {
      EVENTS.forEach(recording::enable);
      recording.start();
      with = cost(probe, connect, settings, row);
      recording.stop();
      recording.dump(file);
    }
    long events = events(file);
    Files.deleteIfExists(file);
    return new SuiteResults.RecordingCount(without, with, events);
  }

  private static CycleCost cost(
      ServerProbe probe, String connect, SuiteSettings settings, SuiteResults.Row row)
      throws Exception {
    try (Clients clients = new Clients(connect, 1)) {
      return CycleCost.measure(
          probe,
          clients.get(0),
          Library.LOCKSTEP,
          row.recipe(),
          Paths.unique("recording"),
          row.paths(),
          settings.countedCycles());
    }
  }

  private static Configuration defaultSettings() throws IOException {
    try {
      return Configuration.getConfiguration("default");
    } catch (ParseException e) {
      throw new IOException("the JDK's default recording settings do not parse", e);
    }
  }

  /** Lockstep's events in the recording {@code file}; 0 if there is none. */
  static long events(Path file) throws IOException {
    if (!Files.exists(file)) {
      return 0;
    }
    long count = 0;
    try (RecordingFile recording = new RecordingFile(file)) {
      while (recording.hasMoreEvents()) {
        RecordedEvent event = recording.readEvent();
        if (EVENTS.contains(event.getEventType().getName())) {
          count++;
        }
      }
    }
    return count;
  }

  private static void log(String message) {
    System.out.println("[bench] " + message);
  }
}

package io.lockstep.demo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

/**
 * A JDK Flight Recording of the demo's runs: the JDK's {@code default} settings (what {@code
 * -XX:StartFlightRecording} records, at about 1% overhead), with Lockstep's three events on and no
 * threshold, so that every acquire, hold and state change of the run is in the file.
 */
final class FlightRecording implements AutoCloseable {
  /** Lockstep's events, as named in a recording. */
  static final List<String> EVENTS =
      List.of("io.lockstep.LockAcquire", "io.lockstep.LockHold", "io.lockstep.LockStateChange");

  private final Recording recording;
  private final Path file;

  private FlightRecording(Recording recording, Path file) {
    this.recording = recording;
    this.file = file;
  }

  /** Starts recording; {@link #stop()} writes {@code file}. */
  static FlightRecording start(Path file) throws IOException, ParseException {
    Recording recording = new Recording(Configuration.getConfiguration("default"));
    recording.setName("lockstep-demo");
    for (String event : EVENTS) {
      recording.enable(event).withoutThreshold();
    }
    recording.start();
    return new FlightRecording(recording, file);
  }

  /** Stops recording, writes the file and counts Lockstep's events in it. */
  Written stop() throws IOException {
    recording.stop();
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    recording.dump(file);
    recording.close();
    Map<String, Long> counts = new LinkedHashMap<>();
    EVENTS.forEach(event -> counts.put(event, 0L));
    try (RecordingFile events = new RecordingFile(file)) {
      while (events.hasMoreEvents()) {
        RecordedEvent event = events.readEvent();
        counts.computeIfPresent(event.getEventType().getName(), (name, count) -> count + 1);
      }
    }
    return new Written(file, Files.size(file), counts);
  }

  @Override
  public void close() {
    recording.close(); // closing again does nothing
  }

  /**
   * A recording written to a file.
   *
   * @param file where
   * @param bytes its size
   * @param counts Lockstep's events in it, by name
   */
  record Written(Path file, long bytes, Map<String, Long> counts) {
    Written {
      counts = Map.copyOf(counts);
    }

    /** Where it is, what is in it and how to open it. */
    List<String> lines() {
      String where = shown(file);
      List<String> parts = new ArrayList<>();
      for (String event : EVENTS) {
        parts.add(
            String.format(
                Locale.ROOT,
                "%,d %s",
                counts.getOrDefault(event, 0L),
                event.substring(event.lastIndexOf('.') + 1)));
      }
      return List.of(
          String.format(
              Locale.ROOT,
              "Flight Recording of the run: %s (%.1f MB; Lockstep events: %s)",
              where,
              bytes / 1e6,
              String.join(", ", parts)),
          "  jfr print --events io.lockstep.LockStateChange " + where,
          "  jfr print --events io.lockstep.LockAcquire " + where + " | less",
          "  jfr summary "
              + where
              + "    or open it in JDK Mission Control (jmc): category"
              + " Lockstep");
    }

    /** The path relative to the working directory if it lies below it, else absolute. */
    private static String shown(Path file) {
      Path absolute = file.toAbsolutePath().normalize();
      Path here = Path.of("").toAbsolutePath();
      return absolute.startsWith(here) ? here.relativize(absolute).toString() : absolute.toString();
    }
  }
}

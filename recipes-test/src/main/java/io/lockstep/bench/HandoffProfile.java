package io.lockstep.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a handoff's time goes: reads a Flight Recording of the handoff section ({@link
 * HandoffScenario}) and splits each handoff of each drain into the steps along its path, for both
 * libraries, from the events of the waiter threads. Not part of the suite; the command:
 *
 * <pre>
 * java -XX:StartFlightRecording=filename=handoff.jfr,settings=handoff.jfc -cp ... \
 *     io.lockstep.bench.BenchmarkSuite --quick --only handoff
 * java -cp ... io.lockstep.bench.HandoffProfile handoff.jfr
 * </pre>
 *
 * <p>The settings must record {@code jdk.ThreadPark} and {@code jdk.JavaMonitorWait} with a
 * threshold of 0 and Lockstep's {@code io.lockstep.LockHold} (on unless disabled). The steps, for a
 * handoff from waiter A to waiter B:
 *
 * <ul>
 *   <li>Lockstep: A sends its delete (A's thread enters ZooKeeper's synchronous wait); B is granted
 *       (its {@code LockHold} begins, on B's client's event thread, after the watch event and the
 *       {@code getData} of its own node); B's thread wakes (its park on the attempt's future ends);
 *       B sends its delete.
 *   <li>Curator: A sends its delete; B's thread is woken (its wait on {@code LockInternals} ends,
 *       notified by its watcher on the event thread); B's {@code getChildren} is answered (its next
 *       synchronous wait ends); B sends its delete.
 * </ul>
 */
public final class HandoffProfile {
  private static final String PACKET = "org.apache.zookeeper.ClientCnxn$Packet";
  private static final String LOCK_INTERNALS =
      "org.apache.curator.framework.recipes.locks.LockInternals";
  private static final Duration DRAIN_GAP = Duration.ofMillis(200);

  /** A wait of one thread: a park or a monitor wait, with what it waited on. */
  private record Wait(Instant start, Instant end, String on) {}

  /** One waiter's moments along the path; null where the recording has none. */
  private record Waiter(Instant woken, Instant readDone, Instant deleteSent, Instant deleteDone) {}

  private final Map<Long, List<Wait>> waitsByThread = new HashMap<>();
  private final Map<String, List<RecordedEvent>> holdsByPath = new TreeMap<>();
  private final Map<Long, String> waiterThreads = new HashMap<>();

  private HandoffProfile() {}

  /** Prints the steps of every drain in the recording given as the argument. */
  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      throw new IllegalArgumentException("usage: HandoffProfile recording.jfr");
    }
    HandoffProfile profile = new HandoffProfile();
    profile.read(Path.of(args[0]));
    profile.lockstep();
    profile.curator();
  }

  private void read(Path file) throws IOException {
    try (RecordingFile recording = new RecordingFile(file)) {
      while (recording.hasMoreEvents()) {
        RecordedEvent event = recording.readEvent();
        RecordedThread thread = event.getThread();
        if (thread == null || thread.getJavaName() == null) {
          continue;
        }
        String type = event.getEventType().getName();
        if (type.equals("io.lockstep.LockHold") && event.getString("path").contains("handoff")) {
          holdsByPath.computeIfAbsent(event.getString("path"), p -> new ArrayList<>()).add(event);
        } else if (thread.getJavaName().startsWith("waiter-")
            && (type.equals("jdk.ThreadPark") || type.equals("jdk.JavaMonitorWait"))) {
          waiterThreads.put(thread.getJavaThreadId(), thread.getJavaName());
          String on =
              type.equals("jdk.ThreadPark")
                  ? "park"
                  : event.getClass("monitorClass") == null
                      ? "?"
                      : event.getClass("monitorClass").getName();
          waitsByThread
              .computeIfAbsent(thread.getJavaThreadId(), t -> new ArrayList<>())
              .add(new Wait(event.getStartTime(), event.getEndTime(), on));
        }
      }
    }
    waitsByThread.values().forEach(w -> w.sort(Comparator.comparing(Wait::start)));
  }

  /** Lockstep's drains, one per lock path, each grant found by its hold. */
  private void lockstep() {
    for (Map.Entry<String, List<RecordedEvent>> drain : holdsByPath.entrySet()) {
      List<RecordedEvent> holds = new ArrayList<>(drain.getValue());
      holds.sort(Comparator.comparing(RecordedEvent::getStartTime));
      List<Instant> grants = new ArrayList<>();
      List<Waiter> waiters = new ArrayList<>();
      for (RecordedEvent hold : holds) {
        long thread = hold.getThread().getJavaThreadId();
        if (!waiterThreads.containsKey(thread)) {
          continue; // the holder
        }
        List<Wait> waits = waitsByThread.get(thread);
        Wait park =
            last(waits, w -> w.on().equals("park") && !w.start().isAfter(hold.getStartTime()));
        Instant woken = park == null ? hold.getStartTime() : park.end();
        Wait delete = first(waits, w -> w.on().equals(PACKET) && !w.start().isBefore(woken));
        grants.add(hold.getStartTime());
        waiters.add(
            new Waiter(
                woken,
                null,
                delete == null ? null : delete.start(),
                delete == null ? null : delete.end()));
      }
      Steps steps = new Steps("Lockstep " + drain.getKey() + ", N = " + waiters.size());
      for (int i = 0; i + 1 < waiters.size(); i++) {
        Waiter a = waiters.get(i);
        Waiter b = waiters.get(i + 1);
        steps.add("A's delete round trip", a.deleteSent(), a.deleteDone());
        steps.add("A's delete sent -> B granted", a.deleteSent(), grants.get(i + 1));
        steps.add("B granted -> B's thread wakes", grants.get(i + 1), b.woken());
        steps.add("B wakes -> B's delete sent", b.woken(), b.deleteSent());
        steps.add("handoff: A's delete sent -> B's", a.deleteSent(), b.deleteSent());
      }
      steps.print();
    }
  }

  /** Curator's drains: its waiter threads wait on LockInternals; drains split by idle gaps. */
  private void curator() {
    List<Waiter> all = new ArrayList<>();
    for (Map.Entry<Long, List<Wait>> thread : waitsByThread.entrySet()) {
      List<Wait> waits = thread.getValue();
      Wait watch = last(waits, w -> w.on().equals(LOCK_INTERNALS));
      if (watch == null) {
        continue; // a Lockstep waiter
      }
      Wait read = first(waits, w -> w.on().equals(PACKET) && !w.start().isBefore(watch.end()));
      Wait delete =
          read == null
              ? null
              : first(waits, w -> w.on().equals(PACKET) && w.start().isAfter(read.end()));
      all.add(
          new Waiter(
              watch.end(),
              read == null ? null : read.end(),
              delete == null ? null : delete.start(),
              delete == null ? null : delete.end()));
    }
    all.sort(Comparator.comparing(Waiter::woken));
    List<List<Waiter>> drains = new ArrayList<>();
    Instant last = Instant.MIN;
    for (Waiter waiter : all) {
      if (Duration.between(last, waiter.woken()).compareTo(DRAIN_GAP) > 0) {
        drains.add(new ArrayList<>());
      }
      drains.get(drains.size() - 1).add(waiter);
      last = waiter.woken();
    }
    for (List<Waiter> waiters : drains) {
      Steps steps = new Steps("Curator drain, N = " + waiters.size());
      for (int i = 0; i + 1 < waiters.size(); i++) {
        Waiter a = waiters.get(i);
        Waiter b = waiters.get(i + 1);
        steps.add("A's delete round trip", a.deleteSent(), a.deleteDone());
        steps.add("A's delete sent -> B's thread woken", a.deleteSent(), b.woken());
        steps.add("B woken -> B's getChildren answered", b.woken(), b.readDone());
        steps.add("B's read answered -> B's delete sent", b.readDone(), b.deleteSent());
        steps.add("handoff: A's delete sent -> B's", a.deleteSent(), b.deleteSent());
      }
      steps.print();
    }
  }

  private static Wait first(List<Wait> waits, Predicate<Wait> which) {
    return waits.stream().filter(which).findFirst().orElse(null);
  }

  private static Wait last(List<Wait> waits, Predicate<Wait> which) {
    Wait found = null;
    for (Wait wait : waits) {
      if (which.test(wait)) {
        found = wait;
      }
    }
    return found;
  }

  /** The durations of each step over one drain: mean and median, in microseconds. */
  private static final class Steps {
    private final String title;
    private final Map<String, List<Long>> micros = new LinkedHashMap<>();

    Steps(String title) {
      this.title = title;
    }

    void add(String step, Instant from, Instant to) {
      if (from != null && to != null) {
        micros
            .computeIfAbsent(step, s -> new ArrayList<>())
            .add(Duration.between(from, to).toNanos() / 1_000);
      }
    }

    void print() {
      System.out.println(title);
      micros.forEach(
          (step, values) -> {
            List<Long> sorted = values.stream().sorted().toList();
            double mean = sorted.stream().mapToLong(Long::longValue).average().orElse(Double.NaN);
            System.out.printf(
                Locale.ROOT,
                "  %-40s mean %7.0f µs  median %7d µs  p90 %7d µs  (%d)%n",
                step,
                mean,
                sorted.get(sorted.size() / 2),
                sorted.get(sorted.size() * 9 / 10),
                sorted.size());
          });
    }
  }
}

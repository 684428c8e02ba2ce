package io.lockstep.faults;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Everything a run recorded: the workers' events as they arrive, and the faults the test process
 * injected. Besides the raw record, it keeps a live view of each worker (what its threads hold and
 * want, its session) for choosing the targets of faults while the run goes on.
 */
final class History {
  /** What the test process knows now of one worker, from its events. */
  static final class Live {
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, Event> holding = new HashMap<>(); // guarded by lock: by thread
    private final Set<String> busy = new HashSet<>(); // guarded by lock: wanting or holding
    private long session; // guarded by lock
    private long lastGrantAt; // guarded by lock
    private final Set<String> marks = new HashSet<>(); // guarded by lock: ready, quiet, bye...

    void apply(Event event) {
      lock.lock();
      try {
        switch (event.type()) {
          case "want" -> busy.add(event.thread());
          case "idle" -> busy.remove(event.thread());
          case "granted" -> {
            holding.put(event.thread(), event);
            lastGrantAt = event.at();
          }
          case "end" -> holding.remove(event.thread());
          case "session" -> session = Long.parseUnsignedLong(event.field(0), 16);
          case "hello", "ready", "quiet", "bye", "expired" -> marks.add(event.type());
          default -> {}
        }
      } finally {
        lock.unlock();
      }
    }

    /** The holds in progress, as their {@code granted} events. */
    List<Event> holds() {
      lock.lock();
      try {
        return new ArrayList<>(holding.values());
      } finally {
        lock.unlock();
      }
    }

    /** Whether a thread wants the lock and does not hold it (queued, or about to be). */
    boolean waiting() {
      lock.lock();
      try {
        return busy.stream().anyMatch(thread -> !holding.containsKey(thread));
      } finally {
        lock.unlock();
      }
    }

    /** Whether no thread wants or holds the lock. */
    boolean idle() {
      lock.lock();
      try {
        return busy.isEmpty() && holding.isEmpty();
      } finally {
        lock.unlock();
      }
    }

    long session() {
      lock.lock();
      try {
        return session;
      } finally {
        lock.unlock();
      }
    }

    long lastGrantAt() {
      lock.lock();
      try {
        return lastGrantAt;
      } finally {
        lock.unlock();
      }
    }

    boolean has(String mark) {
      lock.lock();
      try {
        return marks.contains(mark);
      } finally {
        lock.unlock();
      }
    }
  }

  private final ConcurrentLinkedQueue<Event> events = new ConcurrentLinkedQueue<>();
  private final Map<Integer, Live> live = new ConcurrentHashMap<>();
  private final List<FaultRecord> faults = new CopyOnWriteArrayList<>();

  /** Records one line from {@code worker}. */
  void record(int worker, String line) {
    Event event = Event.parse(worker, line);
    events.add(event);
    live(worker).apply(event);
  }

  /** Records a fault the test process injected. */
  void fault(FaultRecord fault) {
    faults.add(fault);
  }

  /** The live view of {@code worker} (empty until it reports). */
  Live live(int worker) {
    return live.computeIfAbsent(worker, w -> new Live());
  }

  /** Every event so far, in the order of their stamps. */
  List<Event> events() {
    List<Event> sorted = new ArrayList<>(events);
    sorted.sort(Comparator.comparingLong(Event::at));
    return sorted;
  }

  /** Every fault so far, in the order injected. */
  List<FaultRecord> faults() {
    return List.copyOf(faults);
  }
}

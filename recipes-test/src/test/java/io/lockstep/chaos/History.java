package io.lockstep.chaos;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The recorded history of holds, and the checks run on it after a chaos run: no exclusive hold
 * overlaps another hold of the same path, and fencing tokens follow the order of the holds.
 *
 * <p>A hold counts from the moment its acquire returned until its holder released it or was told
 * that the lock was at risk or lost (or, for a session the harness expired, until the expiry: a
 * holder cannot be told in time about that, and fencing is what protects it). A hold told "at risk"
 * that is confirmed again counts again from that moment.
 */
final class History {
  /** One stretch of time during which a holder counted as holding {@code path}. */
  record Segment(String path, boolean exclusive, String holder, long token, long start, long end) {}

  /** A hold in progress: one worker's one acquisition, over one or more paths. */
  static final class Hold {
    private final String holder;
    private final List<String> paths;
    private final boolean exclusive;
    private final long token;
    private final ReentrantLock lock = new ReentrantLock();
    private long since; // guarded by lock: when the current counting stretch began
    private boolean counting; // guarded by lock

    private Hold(String holder, List<String> paths, boolean exclusive, long token, long start) {
      this.holder = holder;
      this.paths = List.copyOf(paths);
      this.exclusive = exclusive;
      this.token = token;
      this.since = start;
      this.counting = true;
    }

    long token() {
      return token;
    }
  }

  private final ConcurrentLinkedQueue<Segment> segments = new ConcurrentLinkedQueue<>();

  Hold begin(String holder, List<String> paths, boolean exclusive, long token) {
    return new Hold(holder, paths, exclusive, token, System.nanoTime());
  }

  /** The holder stops counting (release, at risk, lost, expired); later calls do nothing. */
  void pause(Hold hold) {
    long now = System.nanoTime();
    hold.lock.lock();
    try {
      if (!hold.counting) {
        return;
      }
      hold.counting = false;
      for (String path : hold.paths) {
        segments.add(new Segment(path, hold.exclusive, hold.holder, hold.token, hold.since, now));
      }
    } finally {
      hold.lock.unlock();
    }
  }

  /** Whether the hold counts as holding right now. */
  boolean isCounting(Hold hold) {
    hold.lock.lock();
    try {
      return hold.counting;
    } finally {
      hold.lock.unlock();
    }
  }

  /** The holder counts again (the lock was confirmed held after being at risk). */
  void resume(Hold hold) {
    hold.lock.lock();
    try {
      if (!hold.counting) {
        hold.counting = true;
        hold.since = System.nanoTime();
      }
    } finally {
      hold.lock.unlock();
    }
  }

  /** Whether a hold of {@code path} with a token above {@code token} began before {@code at}. */
  boolean overtakenBefore(String path, long token, long at) {
    for (Segment segment : segments) {
      if (segment.path().equals(path) && segment.token() > token && segment.start() < at) {
        return true;
      }
    }
    return false;
  }

  int segmentCount() {
    return segments.size();
  }

  /** Every pair of overlapping segments of one path where at least one is exclusive. */
  List<String> overlaps() {
    List<String> problems = new ArrayList<>();
    List<Segment> sorted = new ArrayList<>(segments);
    sorted.sort(Comparator.comparing(Segment::path).thenComparingLong(Segment::start));
    List<Segment> active = new ArrayList<>();
    String path = null;
    for (Segment segment : sorted) {
      if (!segment.path().equals(path)) {
        path = segment.path();
        active.clear();
      }
      active.removeIf(earlier -> earlier.end() <= segment.start());
      for (Segment earlier : active) {
        if ((earlier.exclusive() || segment.exclusive())
            && !earlier.holder().equals(segment.holder())) {
          problems.add("overlap on " + path + ": " + earlier + " and " + segment);
        }
      }
      active.add(segment);
    }
    return problems;
  }

  /**
   * Tokens against hold order: every hold that started before an exclusive hold of the same path
   * carries a smaller token, every one that started after it a larger one.
   */
  List<String> tokenOrderViolations() {
    List<String> problems = new ArrayList<>();
    Map<String, List<Segment>> byPath = new TreeMap<>();
    for (Segment segment : segments) {
      byPath.computeIfAbsent(segment.path(), p -> new ArrayList<>()).add(segment);
    }
    for (List<Segment> path : byPath.values()) {
      path.sort(Comparator.comparingLong(Segment::start));
      long[] maxBefore = new long[path.size()];
      long[] minAfter = new long[path.size()];
      long max = Long.MIN_VALUE;
      for (int i = 0; i < path.size(); i++) {
        maxBefore[i] = max;
        max = Math.max(max, path.get(i).token());
      }
      long min = Long.MAX_VALUE;
      for (int i = path.size() - 1; i >= 0; i--) {
        minAfter[i] = min;
        min = Math.min(min, path.get(i).token());
      }
      for (int i = 0; i < path.size(); i++) {
        Segment segment = path.get(i);
        if (segment.exclusive()
            && (maxBefore[i] > segment.token() || minAfter[i] < segment.token())) {
          problems.add("token out of hold order: " + segment);
        }
      }
    }
    return problems;
  }
}

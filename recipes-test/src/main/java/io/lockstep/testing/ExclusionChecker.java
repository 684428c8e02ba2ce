package io.lockstep.testing;

import io.lockstep.testkit.internal.Sessions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;

/**
 * The history of lock holds in one JVM, and the checks run on it: no hold of a path overlaps an
 * exclusive hold of the same path by another holder, and fencing tokens follow the order of the
 * holds. The demo and the chaos run record every hold here.
 *
 * <p><b>When a hold counts.</b> From the moment its acquire returned ({@link #begin}) until it is
 * {@link #end ended} (before its release), or {@link #pause paused} because its holder was told the
 * lock is at risk or lost; a hold {@link #resume resumed} (confirmed held again) counts again from
 * that moment. A hold also stops counting when its session {@link #sessionEnded ended}: the server
 * then deletes its nodes and grants the lock to the next waiter while the old holder may still be
 * running, and a holder cannot always be told in time (a session the harness expires or a client it
 * closes); fencing is what must protect the resource from it.
 *
 * <p>An overlap of two holds that counted is a violation: two holders that both had every reason to
 * believe they held the lock. An overlap of two holds' whole spans, acquire to release, that is not
 * one is <em>excused</em>: one of the two had been told, or its session had ended.
 *
 * <p><b>Counting paths.</b> A path given a {@link #capacity capacity} of N (a semaphore's) is
 * checked by count instead: at no moment may more than N holds of it count. Its holds are left out
 * of the exclusion and token-order checks (leases are held side by side, their tokens unordered).
 */
public final class ExclusionChecker {
  /** One stretch of time during which a hold counted as holding {@code path}. */
  public record Segment(
      int hold,
      String path,
      boolean shared,
      String holder,
      long session,
      long token,
      long start,
      long end) {}

  /**
   * What the checks concluded.
   *
   * @param holds the holds recorded
   * @param overlaps conflicting holds of one path whose spans, acquire to release, overlapped
   * @param excused those of them that never overlapped while both counted
   * @param violations overlaps of counting holds, and tokens out of hold order, described
   */
  public record Verdict(long holds, int overlaps, int excused, List<String> violations) {
    /** Whether exclusion held. */
    public boolean held() {
      return violations.isEmpty();
    }
  }

  /** One holder's one acquisition, over one or more paths. */
  public static final class Hold {
    private final int id;
    private final String holder;
    private final List<LockPart> parts;
    private final long token;
    private final long session;
    private final long begun;
    private final ReentrantLock lock = new ReentrantLock();
    private final List<long[]> stretches = new ArrayList<>(); // guarded by lock: closed stretches
    private long since; // guarded by lock: when the current counting stretch began
    private boolean counting; // guarded by lock
    private long ended = -1; // guarded by lock: when the hold ended, -1 while it lasts

    private Hold(
        int id,
        String holder,
        List<LockPart> parts,
        long token,
        long session,
        long now,
        boolean counting) {
      this.id = id;
      this.holder = holder;
      this.parts = List.copyOf(parts);
      this.token = token;
      this.session = session;
      this.begun = now;
      this.since = now;
      this.counting = counting;
    }

    /** The hold's fencing token; 0 for an unfenced lock. */
    public long token() {
      return token;
    }

    /** Who holds, as reported. */
    public String holder() {
      return holder;
    }

    /** The session the hold was acquired in. */
    public long session() {
      return session;
    }
  }

  private final LongSupplier clock;
  private final long origin;
  private final AtomicInteger ids = new AtomicInteger();
  private final ConcurrentLinkedQueue<Hold> holds = new ConcurrentLinkedQueue<>();
  private final ConcurrentHashMap<Long, Long> sessionsEnded = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Integer> capacities = new ConcurrentHashMap<>();

  /** A checker on {@link System#nanoTime()}. */
  public ExclusionChecker() {
    this(System::nanoTime);
  }

  /** A checker on {@code clock}, in nanoseconds (tests drive it). */
  public ExclusionChecker(LongSupplier clock) {
    this.clock = clock;
    this.origin = clock.getAsLong();
  }

  /**
   * Checks {@code path} by count from now on: at most {@code holders} holds of it may count at once
   * (a semaphore with that many leases), each hold one lease.
   *
   * @throws IllegalArgumentException if {@code holders} is below 1
   */
  public void capacity(String path, int holders) {
    if (holders < 1) {
      throw new IllegalArgumentException("capacity must be at least 1: " + holders);
    }
    capacities.put(path, holders);
  }

  /** Records a hold that begins now, counting. */
  public Hold begin(String holder, List<LockPart> parts, long token, long session) {
    return begin(holder, parts, token, session, true);
  }

  /**
   * Records a hold that begins now.
   *
   * @param holder who holds, as reported
   * @param parts the paths held, and how
   * @param token the hold's fencing token, 0 if the lock has none
   * @param session the session the hold was acquired in
   * @param counting false if the holder was already told the lock is at risk or lost
   */
  public Hold begin(
      String holder, List<LockPart> parts, long token, long session, boolean counting) {
    Hold hold =
        new Hold(ids.incrementAndGet(), holder, parts, token, session, clock.getAsLong(), counting);
    holds.add(hold);
    return hold;
  }

  /** The hold stops counting now (at risk, lost); nothing if it was not counting. */
  public void pause(Hold hold) {
    long now = clock.getAsLong();
    hold.lock.lock();
    try {
      if (hold.counting) {
        hold.counting = false;
        hold.stretches.add(new long[] {hold.since, now});
      }
    } finally {
      hold.lock.unlock();
    }
  }

  /** The hold counts again from now (confirmed held after being at risk), unless it ended. */
  public void resume(Hold hold) {
    long now = clock.getAsLong();
    hold.lock.lock();
    try {
      if (!hold.counting && hold.ended < 0) {
        hold.counting = true;
        hold.since = now;
      }
    } finally {
      hold.lock.unlock();
    }
  }

  /** The hold ends now (its holder is about to release); later calls do nothing. */
  public void end(Hold hold) {
    pause(hold);
    long now = clock.getAsLong();
    hold.lock.lock();
    try {
      if (hold.ended < 0) {
        hold.ended = now;
      }
    } finally {
      hold.lock.unlock();
    }
  }

  /** Whether the hold counts as holding right now. */
  public boolean isCounting(Hold hold) {
    long now = clock.getAsLong();
    hold.lock.lock();
    try {
      return hold.counting && !sessionEndedBy(hold.session, now);
    } finally {
      hold.lock.unlock();
    }
  }

  /**
   * Records that {@code session} ended, not before {@code nanos}: every hold of it stops counting
   * then. Session 0 (no session yet) is ignored.
   */
  public void sessionEnded(long session, long nanos) {
    if (session != 0) {
      sessionsEnded.merge(session, nanos, Math::min);
    }
  }

  /** Records that {@code session} ends now (the harness is about to expire it or close it). */
  public void sessionEnds(long session) {
    sessionEnded(session, clock.getAsLong());
  }

  /** Whether {@code session} may have ended at or before {@code nanos}. */
  public boolean sessionEndedBy(long session, long nanos) {
    Long notBefore = sessionsEnded.get(session);
    return notBefore != null && notBefore <= nanos;
  }

  /**
   * Follows {@code client} from now on, recording each session it leaves behind as ended when the
   * client lost its connection (a server expires a session only after it stopped hearing from the
   * client). The demo uses this; the chaos run does not, since it requires holders to be told.
   */
  public void followSessions(CuratorFramework client) {
    Sessions.onSessionEnded(client, clock, this::sessionEnded);
  }

  /** How many holds began. */
  public long holdCount() {
    return holds.size();
  }

  /**
   * Every stretch during which a hold counted, one per path, cut where its session ended; a hold
   * still counting is taken to count until now.
   */
  public List<Segment> segments() {
    long now = clock.getAsLong();
    List<Segment> segments = new ArrayList<>();
    for (Hold hold : holds) {
      List<long[]> stretches = new ArrayList<>();
      hold.lock.lock();
      try {
        stretches.addAll(hold.stretches);
        if (hold.counting) {
          stretches.add(new long[] {hold.since, now});
        }
      } finally {
        hold.lock.unlock();
      }
      Long sessionEnd = sessionsEnded.get(hold.session);
      for (long[] stretch : stretches) {
        long end = sessionEnd == null ? stretch[1] : Math.min(stretch[1], sessionEnd);
        if (end > stretch[0]) {
          for (LockPart part : hold.parts) {
            segments.add(segment(hold, part, stretch[0], end));
          }
        }
      }
    }
    return segments;
  }

  /**
   * Whether a hold of {@code path} with a token above {@code token} began counting before {@code
   * at}.
   */
  public boolean overtakenBefore(String path, long token, long at) {
    return segments().stream()
        .anyMatch(s -> s.path().equals(path) && s.token() > token && s.start() < at);
  }

  /** Every overlap of counting holds of one path where at least one is exclusive, described. */
  public List<String> overlaps() {
    List<String> problems = new ArrayList<>();
    for (Segment[] pair : conflicts(exclusive(segments()))) {
      problems.add(
          "overlap on " + pair[0].path() + ": " + describe(pair[0]) + " and " + describe(pair[1]));
    }
    return problems;
  }

  /**
   * Tokens against hold order: every hold of a path that began counting before an exclusive hold of
   * it carries a smaller token, every one that began after it a larger one. Holds without a token
   * (unfenced locks) are left out.
   */
  public List<String> tokenOrderViolations() {
    List<String> problems = new ArrayList<>();
    Map<String, List<Segment>> byPath = new TreeMap<>();
    for (Segment segment : exclusive(segments())) {
      if (segment.token() > 0) {
        byPath.computeIfAbsent(segment.path(), p -> new ArrayList<>()).add(segment);
      }
    }
    for (List<Segment> path : byPath.values()) {
      path.sort(Comparator.comparingLong(Segment::start));
      long[] maxBefore = new long[path.size()];
      long max = Long.MIN_VALUE;
      for (int i = 0; i < path.size(); i++) {
        maxBefore[i] = max;
        max = Math.max(max, path.get(i).token());
      }
      long minAfter = Long.MAX_VALUE;
      for (int i = path.size() - 1; i >= 0; i--) {
        Segment segment = path.get(i);
        if (!segment.shared() && (maxBefore[i] > segment.token() || minAfter < segment.token())) {
          problems.add("token out of hold order: " + describe(segment));
        }
        minAfter = Math.min(minAfter, segment.token());
      }
    }
    return problems;
  }

  /** Every check at once, with the overlaps that were excused counted. */
  public Verdict verdict() {
    List<Segment> spans = new ArrayList<>();
    long now = clock.getAsLong();
    for (Hold hold : holds) {
      long end;
      hold.lock.lock();
      try {
        end = hold.ended < 0 ? now : hold.ended;
      } finally {
        hold.lock.unlock();
      }
      for (LockPart part : hold.parts) {
        spans.add(segment(hold, part, hold.begun, end));
      }
    }
    Set<String> violating = new HashSet<>();
    conflicts(exclusive(segments())).forEach(pair -> violating.add(key(pair)));
    List<Segment[]> spanOverlaps = conflicts(exclusive(spans));
    int excused =
        (int) spanOverlaps.stream().filter(pair -> !violating.contains(key(pair))).count();
    List<String> violations = new ArrayList<>(overlaps());
    violations.addAll(tokenOrderViolations());
    violations.addAll(capacityViolations());
    return new Verdict(holds.size(), spanOverlaps.size(), excused, violations);
  }

  /**
   * Every moment a path with a {@link #capacity} had more counting holds than it allows, described
   * with the holds counting then (once per excess: until the count is back within capacity).
   */
  public List<String> capacityViolations() {
    return CapacitySweep.excesses(segments(), capacities, this::describe);
  }

  /** The segments of paths checked by exclusion: those without a capacity. */
  private List<Segment> exclusive(List<Segment> segments) {
    return segments.stream().filter(s -> !capacities.containsKey(s.path())).toList();
  }

  /** The pairs of segments of one path, of different holds, that overlap with one exclusive. */
  private static List<Segment[]> conflicts(List<Segment> segments) {
    List<Segment[]> pairs = new ArrayList<>();
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
        if ((!earlier.shared() || !segment.shared()) && earlier.hold() != segment.hold()) {
          pairs.add(new Segment[] {earlier, segment});
        }
      }
      active.add(segment);
    }
    return pairs;
  }

  private static String key(Segment[] pair) {
    int low = Math.min(pair[0].hold(), pair[1].hold());
    int high = Math.max(pair[0].hold(), pair[1].hold());
    return pair[0].path() + " " + low + " " + high;
  }

  private static Segment segment(Hold hold, LockPart part, long start, long end) {
    return new Segment(
        hold.id, part.path(), part.shared(), hold.holder, hold.session, hold.token, start, end);
  }

  private String describe(Segment segment) {
    return String.format(
        "%s (%s, session 0x%x, token %d, %.3f s to %.3f s)",
        segment.holder(),
        segment.shared() ? "shared" : "exclusive",
        segment.session(),
        segment.token(),
        (segment.start() - origin) / 1e9,
        (segment.end() - origin) / 1e9);
  }
}

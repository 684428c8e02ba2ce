package io.lockstep.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Checks, in the one JVM that runs every simulated instance, that no two holders are ever inside
 * the same lock at once unless both only read.
 *
 * <p>A worker {@link #enter enters} right after its acquire returns, claiming each lock path it now
 * holds (shared for a read lock, exclusive otherwise), and {@link #leave leaves} once its write has
 * committed or been refused, before it releases. Every time a claim meets a conflicting claim of
 * another hold, the overlap is recorded.
 *
 * <p>An overlap is not always a broken lock. When a holder's session ends (the chaos expires it),
 * ZooKeeper deletes its lock nodes and grants the lock to the next waiter while the old holder may
 * still be running; that is what fencing is for, and its writes are refused. So an overlap is
 * excused when one of the two holds belongs to a session that had ended by the time the overlap
 * began ({@link SessionLog}), or when its lock reported the hold lost (a lock reports loss only
 * once its node is gone). Any other overlap is a violation: two holders that both had every reason
 * to believe they held the lock.
 */
final class ExclusionChecker {
  private final ConcurrentHashMap<String, Occupancy> occupancies = new ConcurrentHashMap<>();
  private final ConcurrentLinkedQueue<Overlap> overlaps = new ConcurrentLinkedQueue<>();
  private final LongAdder holds = new LongAdder();

  /** A lock path a hold claims, and whether it claims it shared (a read lock). */
  record Claim(String path, boolean shared) {}

  /** A worker's stay inside the locks of one operation; each stay is its own (identity). */
  static final class Hold {
    private final String label;
    private final int instance;
    private final long sessionId;
    private final List<Claim> claims;
    private final BooleanSupplier lost;

    private Hold(
        String label, int instance, long sessionId, List<Claim> claims, BooleanSupplier lost) {
      this.label = label;
      this.instance = instance;
      this.sessionId = sessionId;
      this.claims = List.copyOf(claims);
      this.lost = lost;
    }

    /** Whether the hold's lock reported it lost. */
    boolean lost() {
      return lost.getAsBoolean();
    }

    String label() {
      return label;
    }

    int instance() {
      return instance;
    }

    long sessionId() {
      return sessionId;
    }

    List<Claim> claims() {
      return claims;
    }
  }

  /** Two holds inside one lock path at once, since {@code startedNanos}. */
  record Overlap(String path, Hold first, Hold second, long startedNanos) {}

  /** What the checker concluded about a run. */
  record Verdict(long holds, int overlaps, int excused, List<String> violations) {
    boolean held() {
      return violations.isEmpty();
    }
  }

  /**
   * Records that a holder is now inside its locks.
   *
   * @param label the operation, as printed
   * @param instance the holder's instance
   * @param sessionId the session the holder acquired in
   * @param claims the lock paths it holds
   * @param lost whether its lock has reported the hold lost (asked when judging)
   */
  Hold enter(String label, int instance, long sessionId, List<Claim> claims, BooleanSupplier lost) {
    Hold hold = new Hold(label, instance, sessionId, claims, lost);
    holds.increment();
    long now = System.nanoTime();
    for (Claim claim : hold.claims()) {
      occupancies.computeIfAbsent(claim.path(), p -> new Occupancy()).enter(hold, claim, now);
    }
    return hold;
  }

  /** Records that {@code hold} has left its locks. */
  void leave(Hold hold) {
    for (Claim claim : hold.claims()) {
      occupancies.get(claim.path()).leave(hold);
    }
  }

  /** Judges every recorded overlap against the sessions that ended. */
  Verdict verdict(SessionLog sessions) {
    int count = 0;
    int excused = 0;
    List<String> violations = new ArrayList<>();
    for (Overlap overlap : overlaps) {
      count++;
      if (excused(overlap.first(), overlap, sessions)
          || excused(overlap.second(), overlap, sessions)) {
        excused++;
      } else {
        violations.add(
            String.format(
                "%s held by %s (instance %d, session 0x%x) and %s (instance %d, session 0x%x)",
                overlap.path(),
                overlap.first().label(),
                overlap.first().instance(),
                overlap.first().sessionId(),
                overlap.second().label(),
                overlap.second().instance(),
                overlap.second().sessionId()));
      }
    }
    return new Verdict(holds.sum(), count, excused, violations);
  }

  private static boolean excused(Hold hold, Overlap overlap, SessionLog sessions) {
    return hold.lost() || sessions.endedBy(hold.sessionId(), overlap.startedNanos());
  }

  /** The holds inside one lock path. */
  private final class Occupancy {
    private final ReentrantLock lock = new ReentrantLock();
    private final List<Claimed> inside = new ArrayList<>(); // guarded by lock

    void enter(Hold hold, Claim claim, long now) {
      lock.lock();
      try {
        for (Claimed other : inside) {
          if (!(claim.shared() && other.claim().shared())) {
            overlaps.add(new Overlap(claim.path(), other.hold(), hold, now));
          }
        }
        inside.add(new Claimed(hold, claim));
      } finally {
        lock.unlock();
      }
    }

    void leave(Hold hold) {
      lock.lock();
      try {
        inside.removeIf(claimed -> claimed.hold() == hold);
      } finally {
        lock.unlock();
      }
    }
  }

  private record Claimed(Hold hold, Claim claim) {}
}

package io.lockstep.testing;

import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockStateChange;
import io.lockstep.recipes.locks.LockStateListener;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Listens to one lock object and keeps its holds in an {@link ExclusionChecker} in step with what
 * the lock tells: a hold stops counting on {@code AT_RISK} or {@code LOST} and counts again on
 * {@code HELD}.
 *
 * <p>A state change can arrive before the hold it is about has begun: the lock may be granted and
 * suspended before the acquiring thread has returned and read the fencing token. So the listener
 * remembers the last state it heard for each fencing token, and a hold whose token was last told
 * {@code AT_RISK} or {@code LOST} begins paused. Register the listener before acquiring.
 */
public final class HoldListener implements LockStateListener {
  private final ExclusionChecker checker;
  private final ReentrantLock lock = new ReentrantLock();
  private final Map<Long, LockState> lastState = new HashMap<>(); // guarded by lock, by token
  private ExclusionChecker.Hold current; // guarded by lock: the hold in progress, or null

  public HoldListener(ExclusionChecker checker) {
    this.checker = checker;
  }

  @Override
  public void stateChanged(LockStateChange change) {
    lock.lock();
    try {
      lastState.put(change.fencingToken(), change.state());
      if (current != null && current.token() == change.fencingToken()) {
        if (change.state() == LockState.AT_RISK || change.state() == LockState.LOST) {
          checker.pause(current);
        } else if (change.state() == LockState.HELD) {
          checker.resume(current);
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Records in the checker that the hold with {@code token} begins now (its acquire just returned);
   * paused if the lock already told that token it is at risk or lost.
   */
  public ExclusionChecker.Hold begin(
      String holder, List<LockPart> parts, long token, long session) {
    return begin(holder, parts, token, session, true);
  }

  /**
   * Records in the checker that a hold begins now, paused if {@code counting} is false (the holder
   * found the hold lost before it could read its token) or the lock already told {@code token} it
   * is at risk or lost.
   */
  public ExclusionChecker.Hold begin(
      String holder, List<LockPart> parts, long token, long session, boolean counting) {
    lock.lock();
    try {
      LockState told = lastState.get(token);
      boolean toldDanger = told == LockState.AT_RISK || told == LockState.LOST;
      current = checker.begin(holder, parts, token, session, counting && !toldDanger);
      return current;
    } finally {
      lock.unlock();
    }
  }

  /** The hold in progress, or null. */
  public ExclusionChecker.Hold current() {
    lock.lock();
    try {
      return current;
    } finally {
      lock.unlock();
    }
  }

  /** Ends the hold in progress, if any (its holder is about to release). */
  public void end() {
    lock.lock();
    try {
      if (current != null) {
        checker.end(current);
        current = null;
      }
    } finally {
      lock.unlock();
    }
  }
}

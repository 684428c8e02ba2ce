package io.lockstep.faults;

import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockStateChange;
import io.lockstep.recipes.locks.LockStateListener;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The state listener of one worker thread's lock object: reports the holds' state changes to the
 * test process ({@code state}), and begins and ends holds there ({@code granted}, {@code end}), as
 * {@link io.lockstep.testing.HoldListener} keeps holds in step in one JVM.
 *
 * <p>A change can arrive before the hold it is about has begun (the grant and a suspension race the
 * return of the acquire; a local handoff's hold hears changes with token 0 until it takes its
 * token). So the changes heard since the acquire began are kept by token, and a hold whose token
 * (or token 0) was told {@code AT_RISK} or {@code LOST} begins paused ({@code counting} 0), with
 * that state reported right after the grant. Whether the grant's own {@code HELD} was heard early
 * is reported too ({@code heldTold}), so that the checks can tell a first {@code HELD} from a
 * {@code HELD} again.
 */
final class HoldTracker implements LockStateListener, HoldState {
  private final EventChannel events;
  private final String thread;
  private final ReentrantLock lock = new ReentrantLock();
  private final Map<Long, LockState> early = new HashMap<>(); // guarded by lock
  private String holdKey; // guarded by lock: the hold in progress, or null
  private long token; // guarded by lock: its token
  private LockState last = LockState.HELD; // guarded by lock: the last state it was told
  private long restoredAt = Long.MIN_VALUE; // guarded by lock: when last told HELD after AT_RISK

  HoldTracker(EventChannel events, String thread) {
    this.events = events;
    this.thread = thread;
  }

  /** An acquire begins: forget what was heard about earlier holds. */
  void acquiring() {
    lock.lock();
    try {
      early.clear();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void stateChanged(LockStateChange change) {
    LockState state = change.state();
    if (state == LockState.RELEASED) {
      return;
    }
    lock.lock();
    try {
      if (holdKey != null && (change.fencingToken() == token || change.fencingToken() == 0)) {
        if (state == LockState.HELD && last == LockState.AT_RISK) {
          restoredAt = System.nanoTime();
        }
        last = state;
        events.send("state", thread, holdKey, state);
      } else {
        early.put(change.fencingToken(), state);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Reports a hold that begins now.
   *
   * @param counting false if the holder already knows the hold is lost (no token)
   */
  void begin(
      String key, long holdToken, long session, String parts, int plannedMs, boolean counting) {
    lock.lock();
    try {
      LockState told = danger(early.get(holdToken)) ? early.get(holdToken) : early.get(0L);
      boolean toldDanger = danger(told);
      boolean heldTold = early.get(holdToken) == LockState.HELD;
      events.send(
          "granted",
          thread,
          key,
          holdToken,
          Long.toHexString(session),
          counting && !toldDanger ? 1 : 0,
          plannedMs,
          parts,
          heldTold ? 1 : 0);
      holdKey = key;
      token = holdToken;
      last = toldDanger ? told : LockState.HELD;
      restoredAt = Long.MIN_VALUE;
      if (toldDanger) {
        events.send("state", thread, key, told);
      }
    } finally {
      lock.unlock();
    }
  }

  /** Reports that the hold in progress ends now (its holder is about to release). */
  void end() {
    lock.lock();
    try {
      if (holdKey != null) {
        events.send("end", thread, holdKey);
        holdKey = null;
      }
    } finally {
      lock.unlock();
    }
  }

  @Override
  public LockState state() {
    lock.lock();
    try {
      return last;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public boolean restoredSince(long nanos) {
    lock.lock();
    try {
      return restoredAt != Long.MIN_VALUE && restoredAt - nanos >= 0;
    } finally {
      lock.unlock();
    }
  }

  static boolean danger(LockState state) {
    return state == LockState.AT_RISK || state == LockState.LOST;
  }
}

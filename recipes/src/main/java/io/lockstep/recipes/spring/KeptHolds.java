package io.lockstep.recipes.spring;

import io.lockstep.recipes.internal.owner.Handles;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockState;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The holds of {@link Locked} calls that ended before their {@link Locked#holdAtLeast()}: each is
 * released once it has been held that long, by a timer on its lock's scheduler (Lockstep's shared,
 * bounded pool: no thread per hold, and the caller does not wait), or at once when {@link
 * #releaseAll()} is called, as the context closes.
 */
final class KeptHolds {
  /* Algorithm notes:
   *
   * Whoever removes a hold from the set releases it, exactly once: its timer, or releaseAll. A call
   * that ends after releaseAll began finds `closed` set, after adding its hold (releaseAll sets it
   * before it walks the set), so one of the two always sees the other and removes the hold.
   * The timer releases without waiting (its delete goes on in the background), so it never blocks
   * a pool thread on ZooKeeper; releaseAll waits for each delete (at most the client's connection
   * timeout while connected), so the nodes are gone before the client closes.
   */

  private final Set<LockHold> kept = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /**
   * The call of {@code call} ended: its hold is released now, or kept until it has lasted {@code
   * holdAtLeast}. Never waits for a kept hold.
   */
  void callEnded(CallHold call, Duration holdAtLeast) {
    long keepNanos = call.ended(holdAtLeast);
    LockHold hold = call.hold();
    LockState state = hold.state();
    if (keepNanos <= 0 || closed || (state != LockState.HELD && state != LockState.AT_RISK)) {
      hold.close();
      return;
    }
    kept.add(hold);
    if (closed) {
      release(hold); // releaseAll began meanwhile
      return;
    }
    long millis = TimeUnit.NANOSECONDS.toMillis(keepNanos + 999_999);
    call.settings().scheduler().schedule(millis, () -> releaseInBackground(hold));
  }

  /** Releases every kept hold now, and from now on each hold when its call ends. */
  void releaseAll() {
    closed = true;
    for (LockHold hold : kept) {
      release(hold);
    }
  }

  /** How many holds are kept. */
  int size() {
    return kept.size();
  }

  private void release(LockHold hold) {
    if (kept.remove(hold)) {
      hold.close();
    }
  }

  private void releaseInBackground(LockHold hold) {
    if (kept.remove(hold)) {
      var unused = Handles.closeAsync(hold);
    }
  }
}

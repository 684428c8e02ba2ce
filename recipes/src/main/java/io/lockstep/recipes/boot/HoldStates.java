package io.lockstep.recipes.boot;

import io.lockstep.recipes.locks.LockAttempt;
import io.lockstep.recipes.locks.LockObserver;
import io.lockstep.recipes.locks.LockState;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The holds of a client that are at risk or lost and not yet released, kept by observing every lock
 * of the client: a hold enters at AT_RISK or LOST, leaves when HELD again or released.
 */
final class HoldStates implements LockObserver {
  /** The troubled holds by attempt id, with their latest state (AT_RISK or LOST). */
  private final Map<Long, LockState> troubled = new ConcurrentHashMap<>();

  @Override
  public void stateChanged(LockAttempt attempt, LockState state, long fencingToken) {
    if (state == LockState.AT_RISK || state == LockState.LOST) {
      troubled.put(attempt.id(), state);
    } else {
      troubled.remove(attempt.id());
    }
  }

  @Override
  public void released(LockAttempt attempt, Duration held, long fencingToken) {
    troubled.remove(attempt.id());
  }

  /** How many holds are in {@code state} now. */
  long count(LockState state) {
    return troubled.values().stream().filter(state::equals).count();
  }
}

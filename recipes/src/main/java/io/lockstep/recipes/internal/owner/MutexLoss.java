package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.PlaceHooks;
import io.lockstep.recipes.locks.LockState;
import java.util.function.Consumer;

/** What a semaphore's {@code locks} mutex attempt tells of its hold: its loss. No user code. */
final class MutexLoss implements PlaceHooks {
  private final Consumer<Attempt> lost;
  volatile Attempt attempt; // set once the attempt is started, before its grant can be lost

  MutexLoss(Consumer<Attempt> lost) {
    this.lost = lost;
  }

  @Override
  public void queueChanged() {}

  @Override
  public void stateChanged(LockState state) {
    Attempt started = attempt;
    if (state == LockState.LOST && started != null) {
      lost.accept(started);
    }
  }
}

package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.queue.Slot;
import java.util.List;
import java.util.function.Supplier;

/**
 * The one {@link AttemptFactory}: its starter starts each attempt, and each is tracked until it
 * settles so that the lock object's close withdraws it (its caller gets the "closed" failure, which
 * this object makes: a lock object per key keeps no object more than it needs); the close then runs
 * {@code onClose}, once.
 */
final class TrackedAttempts implements AttemptFactory, Supplier<RuntimeException> {
  /** An attempt with a node of its own. */
  static final Starter PLAIN =
      (settings, slots, revocationHandler) ->
          Acquisition.start(settings, slots, revocationHandler, null, null);

  private final LockSettings settings;
  private final Starter starter;
  private final Runnable onClose;
  private final LiveWork<Attempt> live; // and whether the object closed

  TrackedAttempts(LockSettings settings, Starter starter, Runnable onClose) {
    this.settings = settings;
    this.starter = starter;
    this.onClose = onClose;
    this.live = new LiveWork<>(Attempt::withdraw, this);
  }

  @Override
  public Attempt start(List<Slot> slots, Runnable revocationHandler) {
    live.checkOpen();
    Attempt attempt = starter.start(settings, slots, revocationHandler);
    live.track(attempt);
    attempt.lifecycle().whenSettled(attempt, live); // leaves the tracker when it settles
    return attempt;
  }

  @Override
  public LockSettings settings() {
    return settings;
  }

  @Override
  public void close() {
    if (live.closeAll()) {
      onClose.run();
    }
  }

  /** The "closed" failure an attempt withdrawn by the close ends with, a new one each time. */
  @Override
  public RuntimeException get() {
    return AttemptFactory.closed(settings);
  }
}

package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.queue.Slot;

/**
 * Whether a lock's later acquisitions are revocable, with Curator's protocol, and what to run when
 * a revocation is requested: set by {@code makeRevocable}, read at each acquire.
 */
public final class Revocation {
  private volatile Runnable handler; // a field, not an atomic object: a lock object per key

  /** Makes later acquisitions revocable, running {@code onRequest} when asked to let go. */
  public void enable(Runnable onRequest) {
    handler = onRequest;
  }

  /** What to run on a revocation request, or null when not revocable. */
  Runnable handler() {
    return handler;
  }

  /**
   * The slot a new acquisition enqueues in: a revocable lock's node carries empty data, so that
   * only a revocation request ever puts data there.
   */
  public Slot slotFor(Slot slot) {
    return handler == null ? slot : Slot.of(slot.path(), slot.driver(), new byte[0]);
  }
}

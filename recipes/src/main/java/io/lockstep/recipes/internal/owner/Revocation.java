package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.queue.Slot;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Whether a lock's later acquisitions are revocable, with Curator's protocol, and what to run when
 * a revocation is requested: set by {@code makeRevocable}, read at each acquire.
 */
public final class Revocation {
  private final AtomicReference<Runnable> handler = new AtomicReference<>();

  /** Makes later acquisitions revocable, running {@code onRequest} when asked to let go. */
  public void enable(Runnable onRequest) {
    handler.set(onRequest);
  }

  /** What to run on a revocation request, or null when not revocable. */
  Runnable handler() {
    return handler.get();
  }

  /**
   * The slot a new acquisition enqueues in: a revocable lock's node carries empty data, so that
   * only a revocation request ever puts data there.
   */
  public Slot slotFor(Slot slot) {
    return handler.get() == null ? slot : Slot.of(slot.path(), slot.driver(), new byte[0]);
  }
}

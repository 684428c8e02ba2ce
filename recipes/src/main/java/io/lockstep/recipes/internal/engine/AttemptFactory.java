package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.queue.Slot;
import java.util.List;

/**
 * How a lock object starts an attempt, chosen when the object is built (as {@code ReentrantLock}
 * chooses its {@code Sync}): an {@link Acquisition} with a node of its own ({@link #plain}), or a
 * member of its process's place in the queue, for local handoff ({@code
 * io.lockstep.recipes.internal.local.LocalPlace#attempts}).
 */
public interface AttemptFactory {
  /**
   * Starts an attempt in the given queues.
   *
   * @param revocationHandler run when a revocation is requested while held, or null if the lock is
   *     not revocable
   * @throws IllegalStateException if the lock object was closed
   */
  Attempt start(List<Slot> slots, Runnable revocationHandler);

  /** The lock object's settings. */
  LockSettings settings();

  /**
   * The lock object closed: no attempt starts from now on, its attempts not granted yet are
   * withdrawn (their callers get {@link #closed}'s exception; a grant that won the race is kept),
   * and its share of a place for local handoff goes (the last one gives the place back when nobody
   * needs it). Holds are not touched. Idempotent.
   */
  void close();

  /** What {@link #start} throws once the lock object closed. */
  static IllegalStateException closed(LockSettings settings) {
    return new IllegalStateException("Lock object " + settings.description() + " is closed");
  }

  /** Starts an attempt of a lock object of {@code settings}. */
  @FunctionalInterface
  interface Starter {
    /**
     * Starts an attempt in {@code slots}.
     *
     * @param revocationHandler run when a revocation is requested while held, or null
     */
    Attempt start(LockSettings settings, List<Slot> slots, Runnable revocationHandler);
  }

  /** Attempts with a node of their own. */
  static AttemptFactory plain(LockSettings settings) {
    return new TrackedAttempts(settings, TrackedAttempts.PLAIN, () -> {});
  }

  /**
   * Attempts with a node of their own, each started once {@code check} has run: it throws to refuse
   * the attempt before anything is sent.
   */
  static AttemptFactory plain(LockSettings settings, Runnable check) {
    return new TrackedAttempts(
        settings,
        (lockSettings, slots, revocationHandler) -> {
          check.run();
          return TrackedAttempts.PLAIN.start(lockSettings, slots, revocationHandler);
        },
        () -> {});
  }

  /**
   * A factory whose attempts {@code starter} starts, each tracked until granted so that the close
   * withdraws it; the close then runs {@code onClose}, once.
   */
  static AttemptFactory of(LockSettings settings, Starter starter, Runnable onClose) {
    return new TrackedAttempts(settings, starter, onClose);
  }
}

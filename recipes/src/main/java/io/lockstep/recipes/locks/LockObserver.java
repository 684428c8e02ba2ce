package io.lockstep.recipes.locks;

import java.time.Duration;

/**
 * Sees every acquisition of the locks it observes, for metrics, tracing and audit: registered for a
 * whole Curator client, or for one lock, with {@link LockObservers}. It has no dependency; the
 * Micrometer binder ({@code io.lockstep.recipes.micrometer.LockstepMetrics}) is built on it.
 *
 * <p>For one attempt the callbacks come in order: {@link #attemptStarted}, then {@link
 * #attemptEnded} (with {@link AcquireOutcome#GRANTED} or how it ended otherwise); for a granted
 * attempt, {@link #stateChanged} for each change while held (AT_RISK, HELD again, LOST), then
 * {@link #released}. {@code attemptStarted} runs in the thread that acquires; the others on
 * Lockstep's threads (the releasing thread waits until {@code released} has run), never on
 * ZooKeeper's event thread. Observers must be quick and must not throw (what they throw is logged
 * and ignored); every method does nothing by default. Which thread runs each kind of callback: <a
 * href="https://github.com/lockstep/lockstep/blob/main/docs/threads.md">Threads: who runs your
 * code</a>.
 */
public interface LockObserver {
  /**
   * An attempt to acquire began: a blocking or asynchronous acquire, a hold, or a {@code Lock}
   * view's lock. A reentrant acquire is no attempt.
   *
   * @param attempt the attempt
   */
  default void attemptStarted(LockAttempt attempt) {}

  /**
   * The attempt ended: granted, or not.
   *
   * @param attempt the attempt
   * @param outcome how it ended
   * @param waited from the start of the attempt to its end
   * @param fencingToken the hold's fencing token if granted, else 0 (also 0 for a hold with local
   *     handoff that has not taken its token yet: see {@link LocalHandoff})
   */
  default void attemptEnded(
      LockAttempt attempt, AcquireOutcome outcome, Duration waited, long fencingToken) {}

  /**
   * A granted hold changed state: {@link LockState#AT_RISK}, {@link LockState#HELD} again, or
   * {@link LockState#LOST}.
   *
   * @param attempt the attempt that became the hold
   * @param state the new state
   * @param fencingToken the hold's fencing token
   */
  default void stateChanged(LockAttempt attempt, LockState state, long fencingToken) {}

  /**
   * A hold was released (also one that had been lost).
   *
   * @param attempt the attempt that became the hold
   * @param held from the grant to the release
   * @param fencingToken the hold's fencing token
   */
  default void released(LockAttempt attempt, Duration held, long fencingToken) {}
}

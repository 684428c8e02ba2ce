package io.lockstep.recipes.spring;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import org.springframework.integration.util.CheckedCallable;
import org.springframework.integration.util.CheckedRunnable;

/**
 * Spring's {@code LockRegistry.executeLocked}, for a {@link LockstepLock}: lock, run the task,
 * unlock; but a task that fails is what the caller hears of, the unlock's own failure (an expired
 * time to live: {@link java.util.ConcurrentModificationException}) added to it as suppressed, where
 * Spring's default methods unlock in a {@code finally} that replaces the task's exception. A task
 * that succeeded while its hold expired still fails with the unlock's exception.
 */
final class LockedTasks {
  private LockedTasks() {}

  /** Locks {@code lock} interruptibly, calls {@code task} and unlocks. */
  static <T, E extends Throwable> T call(LockstepLock lock, CheckedCallable<T, E> task)
      throws E, InterruptedException {
    lock.lockInterruptibly();
    return callHeld(lock, task);
  }

  /**
   * Locks {@code lock} within {@code wait}, calls {@code task} and unlocks.
   *
   * @throws TimeoutException if {@code wait} ran out, with the message of Spring's default method
   */
  static <T, E extends Throwable> T call(
      LockstepLock lock, Object key, Duration wait, CheckedCallable<T, E> task)
      throws E, InterruptedException, TimeoutException {
    Objects.requireNonNull(wait, "waitLockDuration");
    if (!lock.tryLock(wait)) {
      throw new TimeoutException("The lock [%s] was not acquired in time: %s".formatted(key, wait));
    }
    return callHeld(lock, task);
  }

  /** {@code runnable} as a task without a result. */
  static <E extends Throwable> CheckedCallable<Void, E> callable(CheckedRunnable<E> runnable) {
    return () -> {
      runnable.run();
      return null;
    };
  }

  private static <T, E extends Throwable> T callHeld(LockstepLock lock, CheckedCallable<T, E> task)
      throws E {
    T result;
    try {
      result = task.call();
    } catch (Throwable failure) {
      try {
        lock.unlock();
      } catch (RuntimeException | Error unlockFailure) {
        if (unlockFailure != failure) {
          failure.addSuppressed(unlockFailure);
        }
      }
      throw failure;
    }
    lock.unlock(); // ConcurrentModificationException if the hold's time to live ran out
    return result;
  }
}

package io.lockstep.bench;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits for a condition of the server or the clients by polling it, with a deadline. */
final class Poll {
  private static final long INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  private Poll() {}

  /**
   * Returns once {@code condition} holds.
   *
   * @throws IllegalStateException if it does not hold within {@code timeout}
   */
  static void until(String what, Duration timeout, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("timed out after " + timeout + " waiting until " + what);
      }
      LockSupport.parkNanos(INTERVAL_NANOS);
    }
  }
}

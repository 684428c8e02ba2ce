package io.lockstep.testkit;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A fault in force on some links ({@link LockFaults#disconnect}, {@link LockFaults#silence}): it
 * heals by itself when its time is up, or earlier by {@link #heal()}; the extension heals every
 * fault after each test. Thread-safe.
 */
public final class Fault implements AutoCloseable {
  private final Runnable healing;
  private final AtomicBoolean healed = new AtomicBoolean();
  private volatile ScheduledFuture<?> timer;

  Fault(Runnable healing) {
    this.healing = healing;
  }

  void healAfter(ScheduledFuture<?> timer) {
    this.timer = timer;
  }

  /** Ends the fault now: the links forward again. Idempotent. */
  public void heal() {
    if (healed.compareAndSet(false, true)) {
      ScheduledFuture<?> pending = timer;
      if (pending != null) {
        pending.cancel(false);
      }
      healing.run();
    }
  }

  /**
   * Whether the fault has ended.
   *
   * @return true once healed
   */
  public boolean isHealed() {
    return healed.get();
  }

  /** The same as {@link #heal()}, for try-with-resources. */
  @Override
  public void close() {
    heal();
  }
}

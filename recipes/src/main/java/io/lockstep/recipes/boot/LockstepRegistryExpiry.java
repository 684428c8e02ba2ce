package io.lockstep.recipes.boot;

import io.lockstep.recipes.spring.LockstepLockRegistry;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drops the unused locks of a {@link LockstepLockRegistry} at a fixed interval ({@link
 * LockstepLockRegistry#expireUnusedOlderThan(Duration)}), on one daemon thread of its own named
 * {@value #THREAD_NAME}, which {@link #close()} ends. The auto-configuration makes one for the
 * application's registry (its own or the application's) from the {@code lockstep.registry}
 * properties.
 */
public final class LockstepRegistryExpiry implements AutoCloseable {
  /** The name of the expiry's thread: {@value}. */
  public static final String THREAD_NAME = "lockstep-registry-expiry";

  private static final Logger log = LoggerFactory.getLogger(LockstepRegistryExpiry.class);

  private final ScheduledThreadPoolExecutor executor; // null: no scheduled expiry

  /**
   * Starts expiring the unused locks of {@code registry}: every {@code interval}, those last
   * obtained longer than {@code age} ago. A zero interval schedules nothing and starts no thread.
   *
   * @param registry the registry
   * @param age how long an unused lock is kept, zero or positive
   * @param interval how often to expire, positive, or zero for never
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code age} or {@code interval} is negative
   */
  public LockstepRegistryExpiry(LockstepLockRegistry registry, Duration age, Duration interval) {
    Objects.requireNonNull(registry, "registry");
    if (Objects.requireNonNull(age, "age").isNegative()) {
      throw new IllegalArgumentException("age must not be negative: " + age);
    }
    if (Objects.requireNonNull(interval, "interval").isNegative()) {
      throw new IllegalArgumentException("interval must not be negative: " + interval);
    }
    if (interval.isZero()) {
      this.executor = null;
      return;
    }
    long periodNanos = interval.toNanos();
    this.executor =
        new ScheduledThreadPoolExecutor(
            1,
            task -> {
              Thread thread = new Thread(task, THREAD_NAME);
              thread.setDaemon(true);
              return thread;
            });
    executor.setRemoveOnCancelPolicy(true);
    var unused =
        executor.scheduleWithFixedDelay(
            () -> expire(registry, age), periodNanos, periodNanos, TimeUnit.NANOSECONDS);
  }

  private static void expire(LockstepLockRegistry registry, Duration age) {
    try {
      registry.expireUnusedOlderThan(age);
    } catch (RuntimeException e) { // keep the schedule: a later run may succeed
      log.warn("Expiring the unused locks of {} failed", registry, e);
    }
  }

  /**
   * Whether an expiry is scheduled.
   *
   * @return true while expiries run at the interval; false for a zero interval or once closed
   */
  public boolean isScheduled() {
    return executor != null && !executor.isShutdown();
  }

  /** Stops the expiry and ends its thread. Closing again does nothing. */
  @Override
  public void close() {
    if (executor != null) {
      executor.shutdownNow();
    }
  }

  @Override
  public String toString() {
    return "LockstepRegistryExpiry[" + (isScheduled() ? "scheduled" : "not scheduled") + "]";
  }
}

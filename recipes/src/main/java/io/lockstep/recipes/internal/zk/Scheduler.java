package io.lockstep.recipes.internal.zk;

/**
 * Where the engine runs work that must not run on ZooKeeper's event thread: retries after a delay,
 * the rare blocking call, and user callbacks. Injected through {@link LockEngine}, so tests can
 * drive time.
 */
public interface Scheduler {
  /** Runs {@code task} after {@code delayMillis}. */
  void schedule(long delayMillis, Runnable task);

  /** Runs {@code task} soon, on another thread. */
  void execute(Runnable task);
}

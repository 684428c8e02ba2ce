package io.lockstep.demo;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockState;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.locks.InterProcessLock;

/**
 * The lock of one operation, created for it, acquired and released once: a Lockstep lock, whose
 * ownership checks fence the writes and whose listeners report loss, or a Curator lock, which has
 * neither.
 */
final class Guard {
  private final InterProcessLock lock;

  Guard(InterProcessLock lock) {
    this.lock = lock;
  }

  /** Acquires within {@code timeout}; false if the time ran out. */
  boolean acquire(Duration timeout) throws Exception {
    return lock.acquire(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * The checks to put in a write's transaction so that it commits only while the lock is held;
   * empty for a Curator lock.
   *
   * @throws io.lockstep.recipes.locks.LockOwnershipLostException if the lock is known lost
   */
  List<CuratorOp> fence() {
    return lock instanceof FencedLock fenced ? fenced.ownershipChecks() : List.of();
  }

  /** Hears the lock's state changes; a Curator lock has none to tell. */
  void onStateChange(Consumer<LockState> listener) {
    if (lock instanceof FencedLock fenced) {
      fenced.getStateListenable().addListener(change -> listener.accept(change.state()));
    }
  }

  void release() throws Exception {
    lock.release();
  }
}

package io.lockstep.recipes.internal.engine;

import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * A pure state machine and the one lock it is touched under: every read and every event goes
 * through {@link #apply}, so nothing reaches the machine without the lock, and nothing else is done
 * under it (no I/O, no callbacks: the steps it decides are carried out after unlocking).
 *
 * @param <M> the machine
 */
public final class Guarded<M> {
  private final ReentrantLock lock = new ReentrantLock();
  private final M machine;

  public Guarded(M machine) {
    this.machine = machine;
  }

  /** Runs {@code work} on the machine under the lock; returns what it returns. */
  public <T> T apply(Function<M, T> work) {
    lock.lock();
    try {
      return work.apply(machine);
    } finally {
      lock.unlock();
    }
  }
}

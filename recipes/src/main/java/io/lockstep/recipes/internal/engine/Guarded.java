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
public class Guarded<M> {
  private final ReentrantLock lock = new ReentrantLock();
  private final M machine;

  public Guarded(M machine) {
    this.machine = machine;
  }

  /** Work on the machine with two arguments: see {@link #apply(Object, Object, Work)}. */
  @FunctionalInterface
  public interface Work<M, A, B, T> {
    T on(M machine, A a, B b);
  }

  /**
   * As {@link #apply(Function)}, passing {@code a} and {@code b} to {@code work}: a method
   * reference or lambda that captures nothing is made once, so an event costs no object for it.
   */
  public <A, B, T> T apply(A a, B b, Work<M, A, B, T> work) {
    lock.lock();
    try {
      return work.on(machine, a, b);
    } finally {
      lock.unlock();
    }
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

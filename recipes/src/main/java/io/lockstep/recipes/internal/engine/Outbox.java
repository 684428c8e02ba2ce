package io.lockstep.recipes.internal.engine;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out a state owner's steps in the order it decided them, without holding its lock while
 * they run. A step is added under the owner's lock ({@link #add}); the thread that added the first
 * step of a run drains the outbox after unlocking ({@link #drain}), running the steps other threads
 * add meanwhile too. Steps never block; a step that leads to a new event adds to the same outbox
 * and runs in the same drain, after the steps before it.
 *
 * <p>The first step of a drain is kept in a field of its own, for the thread that drains: most
 * events lead to one step, which then costs no queue node, and an outbox that never has two steps
 * at once never makes its queue.
 */
public final class Outbox<T> {
  private static final Logger log = LoggerFactory.getLogger(Outbox.class);

  @SuppressWarnings("rawtypes") // the updater is the same for every type of step
  private static final AtomicIntegerFieldUpdater<Outbox> PENDING =
      AtomicIntegerFieldUpdater.newUpdater(Outbox.class, "pending");

  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<Outbox, Queue> QUEUE =
      AtomicReferenceFieldUpdater.newUpdater(Outbox.class, Queue.class, "queue");

  private final Consumer<T> runner;

  @SuppressWarnings("unused") // through PENDING
  private volatile int pending; // steps added and not yet run; a drain runs while it is not 0

  private volatile Queue<T> queue; // the steps after the first of a drain; made at the first one

  // The first step of a drain: written by the thread that added it and took the drain (PENDING
  // went from 0 to 1), read and cleared by that thread as it drains, before PENDING goes back to 0.
  private T first;

  public Outbox(Consumer<T> runner) {
    this.runner = runner;
  }

  /**
   * Queues a step. Call under the owner's lock, so that the order of the steps is the order of the
   * decisions.
   *
   * @return true if the caller must {@link #drain} once it has unlocked
   */
  @SuppressWarnings("unchecked") // PENDING and QUEUE are this class's own fields
  public boolean add(T step) {
    if (PENDING.compareAndSet(this, 0, 1)) {
      first = step;
      return true;
    }
    queue().add(step); // in the queue before it is counted: a drain that counts it finds it
    return PENDING.getAndIncrement(this) == 0;
  }

  /** Runs the queued steps, and those added while it runs. Call outside the owner's lock. */
  @SuppressWarnings("unchecked")
  public void drain() {
    T step = first;
    first = null;
    if (step == null) {
      step = queue().poll(); // the drain was taken by a step that went to the queue
    }
    while (true) {
      run(step);
      if (PENDING.decrementAndGet(this) == 0) {
        return;
      }
      step = queue().poll();
    }
  }

  /**
   * Runs {@code step} at once in the calling thread if nothing is queued or running, as the first
   * step of a drain.
   *
   * @return -1 if the outbox was busy: nothing was run, the caller should {@link #add} instead; 1
   *     if steps were added while it ran, whose {@link #drain} the caller must see to elsewhere; 0
   *     otherwise
   */
  @SuppressWarnings("unchecked")
  int runIfIdle(T step) {
    if (!PENDING.compareAndSet(this, 0, 1)) {
      return -1;
    }
    run(step);
    return PENDING.decrementAndGet(this) == 0 ? 0 : 1;
  }

  @SuppressWarnings("unchecked")
  private Queue<T> queue() {
    Queue<T> made = queue;
    if (made == null) {
      made = new ConcurrentLinkedQueue<>();
      if (!QUEUE.compareAndSet(this, null, made)) {
        made = queue;
      }
    }
    return made;
  }

  private void run(T step) {
    try {
      runner.accept(step);
    } catch (RuntimeException | Error e) {
      log.error("Lockstep could not carry out {}", step, e);
    }
  }
}

package io.lockstep.recipes.internal.engine;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out a state owner's steps in the order it decided them, without holding its lock while
 * they run. A step is added under the owner's lock ({@link #add}); the thread that added the first
 * step of a run drains the outbox after unlocking ({@link #drain}), running the steps other threads
 * add meanwhile too. Steps never block; a step that leads to a new event adds to the same outbox
 * and runs in the same drain, after the steps before it.
 */
public final class Outbox<T> {
  private static final Logger log = LoggerFactory.getLogger(Outbox.class);

  private final Queue<T> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger pending = new AtomicInteger();
  private final Consumer<T> runner;

  public Outbox(Consumer<T> runner) {
    this.runner = runner;
  }

  /**
   * Queues a step. Call under the owner's lock, so that the order of the steps is the order of the
   * decisions.
   *
   * @return true if the caller must {@link #drain} once it has unlocked
   */
  public boolean add(T step) {
    queue.add(step);
    return pending.getAndIncrement() == 0;
  }

  /** Runs the queued steps, and those added while it runs. Call outside the owner's lock. */
  public void drain() {
    do {
      run(queue.poll());
    } while (pending.decrementAndGet() != 0);
  }

  /**
   * Runs {@code step} at once in the calling thread if nothing is queued or running, as the first
   * step of a drain; if steps are added meanwhile, hands their drain to {@code drainElsewhere}.
   *
   * @return false if the outbox was busy: nothing was run, the caller should {@link #add} instead
   */
  boolean runIfIdle(T step, Runnable drainElsewhere) {
    if (!pending.compareAndSet(0, 1)) {
      return false;
    }
    run(step);
    if (pending.decrementAndGet() != 0) {
      drainElsewhere.run();
    }
    return true;
  }

  private void run(T step) {
    try {
      runner.accept(step);
    } catch (RuntimeException | Error e) {
      log.error("Lockstep could not carry out {}", step, e);
    }
  }
}

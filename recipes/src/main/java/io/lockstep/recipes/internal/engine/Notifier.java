package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.zk.Scheduler;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers one acquisition's notices (state changes, the grant, a revocation request) in the order
 * the state produced them, one at a time, on the scheduler's threads: never on ZooKeeper's event
 * thread, and never two at once, so a listener never hears AT_RISK before the HELD that preceded
 * it.
 *
 * <p>A notice that runs no user code (waking the caller when the lock has no listeners) runs in the
 * calling thread if nothing is queued before it, saving a thread hop on the common path.
 *
 * <p>It is the engine's one serial executor: a leader election's callbacks run on one too.
 */
public final class Notifier {
  private static final Logger log = LoggerFactory.getLogger(Notifier.class);

  /** The notifier whose notices the current thread is running, if any. */
  private static final ThreadLocal<Notifier> draining = new ThreadLocal<>();

  private final Scheduler scheduler;
  private final Outbox<Runnable> notices = new Outbox<>(Notifier::runLogged);

  public Notifier(Scheduler scheduler) {
    this.scheduler = scheduler;
  }

  /** Queues a notice that may run user code. */
  public void submit(Runnable notice) {
    if (notices.add(notice)) {
      scheduler.execute(this::drain);
    }
  }

  /**
   * Runs a notice in the calling thread if nothing is queued, else after what is, without waiting:
   * for notices that run no user code, on any thread.
   */
  void submitQuiet(Runnable notice) {
    if (!runHereIfIdle(notice)) {
      submit(notice);
    }
  }

  /**
   * Runs a notice before returning, after every notice queued before it: in the calling thread if
   * nothing is queued, else by waiting for the queue to reach it. Only for a caller's own thread
   * (never ZooKeeper's): {@code release()} tells the listeners before it returns. Called from a
   * listener, it queues the notice instead, behind the one running.
   */
  void deliverNow(Runnable notice) {
    if (runHereIfIdle(notice)) {
      return;
    }
    if (draining.get() == this) {
      submit(notice);
      return;
    }
    submitTracked(notice).join();
  }

  /**
   * Queues a notice that may run user code, and returns a future completed once it has run (and
   * every notice queued before it).
   */
  CompletableFuture<Void> submitTracked(Runnable notice) {
    CompletableFuture<Void> delivered = new CompletableFuture<>();
    submit(
        () -> {
          try {
            notice.run();
          } finally {
            delivered.complete(null);
          }
        });
    return delivered;
  }

  /** Whether the current thread is running this notifier's notices (a listener calls us). */
  boolean isDeliveringHere() {
    return draining.get() == this;
  }

  private boolean runHereIfIdle(Runnable notice) {
    Notifier outer = draining.get();
    draining.set(this);
    int ran;
    try {
      ran = notices.runIfIdle(notice);
    } finally {
      draining.set(outer);
    }
    if (ran > 0) {
      scheduler.execute(this::drain); // notices came while it ran
    }
    return ran >= 0;
  }

  private void drain() {
    whileDraining(notices::drain);
  }

  /** Runs {@code work} marked as this notifier's drain, for {@link #isDeliveringHere}. */
  private void whileDraining(Runnable work) {
    Notifier outer = draining.get();
    draining.set(this);
    try {
      work.run();
    } finally {
      draining.set(outer);
    }
  }

  private static void runLogged(Runnable notice) {
    try {
      notice.run();
    } catch (RuntimeException | Error e) {
      log.error("A Lockstep lock listener failed", e);
    }
  }
}

package io.lockstep.recipes.leader.compat;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.Leadership;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A {@link LeaderSelector}'s place in the queue: the election it is in, and the one it left last
 * (its node may still be going), under one lock, which a turn's beginning, an interrupt, a requeue,
 * a cancellation and the close take.
 */
final class SelectorQueue {
  private final ReentrantLock lock = new ReentrantLock(); // bookkeeping only, never a wait
  private final SelectorTurns turns;
  private final Supplier<LeaderElection> newElection; // built, not started
  private final Consumer<LeaderElection> join; // hears and starts it
  private volatile LeaderElection queued; // written under lock: the election it is in, or null
  private LeaderElection leaving; // guarded by lock: the election it left last, or null

  SelectorQueue(
      SelectorTurns turns, Supplier<LeaderElection> newElection, Consumer<LeaderElection> join) {
    this.turns = turns;
    this.newElection = newElection;
    this.join = join;
  }

  /**
   * Queues a new election unless one is queued; {@code started} is checked under the lock {@link
   * #close} takes the queue with, so a requeue that passed it queues an election the close takes.
   *
   * @throws IllegalStateException if not {@code started}
   */
  boolean requeue(BooleanSupplier started) {
    LeaderElection election;
    lock.lock();
    try {
      if (!started.getAsBoolean()) {
        throw new IllegalStateException("close() has already been called"); // Curator's words
      }
      if (queued != null) {
        return false;
      }
      election = newElection.get();
      queued = election;
    } finally {
      lock.unlock();
    }
    join.accept(election);
    return true;
  }

  /** The election the selector is in, or null. */
  LeaderElection queued() {
    return queued;
  }

  /** The leadership the queued election holds now, or null. */
  Leadership elected() {
    LeaderElection election = queued();
    return election == null ? null : election.leadership().orElse(null);
  }

  /** Interrupts {@code takeLeadership}, running or elected to run: it begins interrupted. */
  void interrupt() {
    lock.lock();
    try {
      turns.interrupt(elected());
    } finally {
      lock.unlock();
    }
  }

  /**
   * Whether the turn of {@code leadership} begins in this thread: unless it ended, or its election
   * was left, before its turn came. Under the lock an {@link #interrupt()} takes, so it reaches the
   * turn.
   */
  boolean begin(LeaderElection election, Leadership leadership) {
    lock.lock();
    try {
      boolean begins = queued == election && SelectorTurns.stillHeld(leadership);
      if (begins) {
        turns.begin(leadership);
      }
      return begins;
    } finally {
      lock.unlock();
    }
  }

  /** A turn without autoRequeue ended: its election is left, until a requeue. */
  void leave(LeaderElection election) {
    markLeft(election);
    election.close(); // out of the queue until requeue(), with a leadership elected meanwhile
  }

  /**
   * The executor refused the turn of a leadership {@code election} elected (it was shut down): the
   * election is left, so that the next participant leads, and closed in the background, not in the
   * thread that heard the election.
   */
  void leaveInBackground(LeaderElection election) {
    markLeft(election);
    var unused = CompletableFuture.runAsync(election::close);
  }

  private void markLeft(LeaderElection election) {
    lock.lock();
    try {
      if (queued == election) {
        queued = null; // requeue() may queue a new one while this one closes, as Curator's
      }
      leaving = election; // close() closes it too: waits for its node, if not gone yet
    } finally {
      lock.unlock();
    }
  }

  /**
   * The adapter cancelled the leadership (SUSPENDED or LOST), as Curator 5.9.0's selector hears it:
   * its whole election is cancelled. A leader's {@code takeLeadership} is interrupted (elected, it
   * begins interrupted) and ends its turn; a waiting selector leaves the queue, and with {@code
   * requeue} queues again at the back: no {@code takeLeadership} begins on a leadership elected
   * around the suspension, which this cancellation would not reach.
   */
  void cancel(boolean requeue) {
    LeaderElection left;
    LeaderElection joined;
    lock.lock();
    try {
      Leadership elected = elected();
      if (queued == null || elected != null || turns.leading() != null) {
        turns.interrupt(elected);
        return;
      }
      left = queued;
      leaving = left; // close() waits for its node too
      queued = requeue ? newElection.get() : null;
      joined = queued;
    } finally {
      lock.unlock();
    }
    left.close(); // at once while the connection is down; its node goes once it is back
    if (joined != null) {
      join.accept(joined);
    }
  }

  /**
   * Leaves for good, if {@code closing} (run under the lock, so no requeue queues after it): the
   * leader is interrupted, and the election the selector is in and the one it left last are closed
   * by {@code close} (their nodes gone on return while ZooKeeper is reachable).
   *
   * @throws IllegalStateException if not {@code closing}
   */
  void close(BooleanSupplier closing, Runnable beforeLeaving) {
    LeaderElection election;
    LeaderElection left;
    lock.lock();
    try {
      if (!closing.getAsBoolean()) {
        throw new IllegalStateException("Already closed or has not been started");
      }
      election = queued;
      left = leaving;
      queued = null;
      leaving = null;
    } finally {
      lock.unlock();
    }
    turns.interrupt(null);
    beforeLeaving.run();
    if (election != null) {
      election.close();
    }
    if (left != null) {
      left.close(); // a turn closes it too: this waits for its node all the same
    }
  }
}

package io.lockstep.recipes.leader.compat;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.Leadership;
import io.lockstep.recipes.leader.LeadershipListener;
import io.lockstep.recipes.locks.LockState;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * A {@link LeaderSelector}'s turns at {@code takeLeadership}: one at a time, as Curator's selector
 * runs them. A leadership elected while a turn still runs (the election queued again on a new
 * session while the interrupted leader returns) waits for that turn to end, which then decides
 * whether it runs.
 */
final class SelectorTurns {
  private final ReentrantLock lock = new ReentrantLock(); // bookkeeping only, never a wait
  private final Consumer<Runnable> submit; // onto the selector's executor; throws once closed
  private final BiConsumer<LeaderElection, Leadership> turn;
  private final BiConsumer<LeaderElection, RuntimeException> refused; // the executor's refusal
  private boolean running; // guarded by lock: a turn is submitted or running
  private Leadership next; // guarded by lock: elected while a turn ran
  private LeaderElection nextElection; // guarded by lock: the election of next
  private Thread leader; // guarded by lock: running takeLeadership, or null
  private volatile Leadership leading; // written under lock: the leadership it runs for, or null
  private Leadership interruptAtStart; // guarded by lock: elected, interrupted before its turn

  SelectorTurns(
      Consumer<Runnable> submit,
      BiConsumer<LeaderElection, Leadership> turn,
      BiConsumer<LeaderElection, RuntimeException> refused) {
    this.submit = submit;
    this.turn = turn;
    this.refused = refused;
  }

  /**
   * Hears {@code election}: each leadership it elects takes its turn, one {@code takeLeadership} at
   * a time, while {@code open} (a selector closed meanwhile gives the leadership up).
   */
  LeadershipListener electing(LeaderElection election, BooleanSupplier open) {
    return new LeadershipListener() {
      @Override
      public void elected(Leadership leadership) {
        if (open.getAsBoolean()) {
          SelectorTurns.this.elected(election, leadership);
        }
      }
    };
  }

  /** Whether {@code leadership} is still held as its turn comes: else its turn does not run. */
  static boolean stillHeld(Leadership leadership) {
    LockState held = leadership.state();
    return held == LockState.HELD || held == LockState.AT_RISK;
  }

  /**
   * {@code takeLeadership} begins in this thread for {@code leadership}: interrupted at once if
   * {@link #interrupt} reached it since its election, as Curator's leader thread is.
   */
  void begin(Leadership leadership) {
    lock.lock();
    try {
      leader = Thread.currentThread();
      leading = leadership;
      if (interruptAtStart == leadership) {
        leader.interrupt();
      }
      interruptAtStart = null;
    } finally {
      lock.unlock();
    }
  }

  /** {@code takeLeadership} ended: an interrupt for it ends with it, not reaching the thread. */
  void end() {
    lock.lock();
    try {
      leader = null;
      leading = null;
    } finally {
      lock.unlock();
    }
    Thread.interrupted(); // interrupts come under the lock while leader is set: none comes after
  }

  /**
   * Interrupts the running {@code takeLeadership}, and the one {@code elected} (null if none) is to
   * run: it begins interrupted.
   */
  void interrupt(Leadership elected) {
    lock.lock();
    try {
      if (leader != null) {
        leader.interrupt();
      }
      if (elected != null && elected != leading) {
        interruptAtStart = elected;
      }
    } finally {
      lock.unlock();
    }
  }

  /** The leadership {@code takeLeadership} runs for now, or null. */
  Leadership leading() {
    return leading;
  }

  /** {@code leadership} was elected in {@code election}: its turn runs now, or after this one. */
  void elected(LeaderElection election, Leadership leadership) {
    lock.lock();
    try {
      if (running) {
        next = leadership;
        nextElection = election;
        return;
      }
      running = true;
    } finally {
      lock.unlock();
    }
    submit(election, leadership);
  }

  /**
   * A turn ended: the leadership elected meanwhile runs next, unless its election is {@code closed}
   * (a selector without {@code autoRequeue} left it; null if none was); else no turn runs.
   */
  void ended(LeaderElection closed) {
    Leadership following;
    LeaderElection itsElection;
    lock.lock();
    try {
      following = nextElection == closed ? null : next;
      itsElection = nextElection;
      next = null;
      nextElection = null;
      running = following != null;
    } finally {
      lock.unlock();
    }
    if (following != null) {
      submit(itsElection, following);
    }
  }

  private void submit(LeaderElection election, Leadership leadership) {
    try {
      submit.accept(() -> turn.accept(election, leadership));
    } catch (RuntimeException refusal) { // closed, or shut down: no turn runs any more
      lock.lock();
      try {
        running = false;
        next = null;
        nextElection = null;
      } finally {
        lock.unlock();
      }
      refused.accept(election, refusal);
    }
  }
}

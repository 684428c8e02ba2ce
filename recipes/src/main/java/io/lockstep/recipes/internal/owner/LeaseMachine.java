package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.locks.AcquireOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The rules of one request for {@code qty} leases of a counting semaphore: a {@link LeaseEvent}
 * goes in, the {@link LeaseStep}s to take come out. No I/O, no threads, no lock: {@link
 * LeaseRequest} owns it under its lock and carries the steps out after unlocking.
 */
final class LeaseMachine {
  /*
   * Algorithm notes.
   *
   * Stages: FAST (a lease without the mutex: granted, or its first verdict is "wait", and then it
   * is withdrawn at once, before its watch is armed), MUTEX (the `locks` mutex, Curator's
   * InterProcessMutex layout), LEASE (a lease whose waiting verdict is a child watch on the leases
   * directory; only the mutex holder waits there, as in Curator's protocol, so a waiting lease of
   * ours never sits beside a waiting Curator lease: neither would ever count few enough).
   *
   * Repeatedly: FAST until qty granted or one says "wait"; then give the fast leases back (a
   * request never holds leases while it queues for the mutex, or two requests for several leases
   * could each keep some and wait for the other's), MUTEX once, LEASE until qty granted; release
   * the mutex; succeed. The deadline, a cancel, a failure end any stage: exactly one ending wins
   * (the stage becomes ENDED), and every lease granted so far and the mutex are given back.
   *
   * The mutex lost while a lease waits (its session ended): the lease is withdrawn (kept if it was
   * granted first) and the mutex taken again, so no lease of ours waits without it. Lost before its
   * grant was heard, it is released and taken again at once, and its grant ignored.
   *
   * A withdrawal the machine asks for is answered by a Withdrawn event. An ending that comes while
   * one is out waits for that answer (`deferred`): a grant that won the race is kept (a deadline
   * that finds every lease granted succeeds) or given back (a cancel), never lost.
   *
   * Observers hear one acquisition per lease: a fast try or waiting lease withdrawn to queue again
   * is withdrawn untold, and its acquisition is carried on by the next lease attempt (Carry), or
   * ended with the request's outcome by the runner's Finish. The mutex is unobserved.
   */

  /** Where the request stands. */
  enum Stage {
    FAST,
    MUTEX,
    LEASE,
    /** An ending won: nothing new starts. */
    ENDED
  }

  /** No attempt. */
  static final int NONE = 0;

  private final int qty;
  private final Budget budget; // the caller's, from when it called
  private final LongSupplier clock;

  private final List<Integer> granted = new ArrayList<>(); // leases granted so far
  private Stage stage = Stage.FAST;
  private int current = NONE; // the attempt in flight
  private int mutex = NONE; // from the mutex attempt's start until given back
  private int withdrawing = NONE; // an attempt this machine withdraws, until Withdrawn
  private int expiring = NONE; // the attempt the deadline ends, until Expired
  private boolean lastTry; // the fast try being withdrawn was the zero budget's only try
  private boolean carrying; // a withdrawn acquisition is kept for the next lease to carry on
  private LeaseEvent deferred; // a Deadline or Cancel that came while a withdrawal was out
  private long graceEnd; // the deadline's: when the caller must have its answer
  private int ids;

  /**
   * @param budget the caller's budget, on {@code clock}
   * @param clock nanoseconds, as {@link System#nanoTime()}
   */
  LeaseMachine(int qty, Budget budget, LongSupplier clock) {
    this.qty = qty;
    this.budget = budget;
    this.clock = clock;
  }

  Stage stage() {
    return stage;
  }

  /** The event's transition: the steps to take, in order. */
  List<LeaseStep> on(LeaseEvent event) {
    List<LeaseStep> steps = new ArrayList<>(4);
    if (event instanceof LeaseEvent.Begin) {
      next(steps);
    } else if (event instanceof LeaseEvent.FastDecided decided) {
      fastDecided(decided.attempt(), steps);
    } else if (event instanceof LeaseEvent.Withdrawn withdrawn) {
      withdrawn(withdrawn.attempt(), withdrawn.outcome(), steps);
    } else if (event instanceof LeaseEvent.Granted grant) {
      granted(grant, steps);
    } else if (event instanceof LeaseEvent.MutexLost lost) {
      mutexLost(lost.attempt(), steps);
    } else if (event instanceof LeaseEvent.Deadline deadline) {
      deadline(deadline, steps);
    } else if (event instanceof LeaseEvent.Cancel cancel) {
      cancel(cancel, steps);
    } else if (event instanceof LeaseEvent.Expired expired) {
      expired(expired.attempt(), expired.ending(), steps);
    }
    return steps;
  }

  // ---- the stages ----

  /** Starts the next attempt, or succeeds with every lease granted. */
  private void next(List<LeaseStep> steps) {
    if (stage == Stage.ENDED) {
      return;
    }
    if (granted.size() == qty) {
      succeed(steps);
      return;
    }
    current = ++ids;
    switch (stage) {
      case FAST -> steps.add(new LeaseStep.StartFast(current));
      case MUTEX -> {
        mutex = current;
        steps.add(new LeaseStep.StartMutex(current));
      }
      default -> {
        steps.add(new LeaseStep.StartLease(current, carrying));
        carrying = false;
      }
    }
  }

  /** A fast try's first verdict: withdraw it before its watch is armed (kept if granted). */
  private void fastDecided(int attempt, List<LeaseStep> steps) {
    if (stage != Stage.FAST || attempt != current || withdrawing != NONE) {
      return;
    }
    lastTry = budget.remainingNanos() == 0;
    withdrawing = attempt;
    current = NONE;
    steps.add(new LeaseStep.Withdraw(attempt, lastTry ? AcquireOutcome.TIMED_OUT : null));
  }

  /** A withdrawal this machine asked for was carried out. */
  private void withdrawn(int attempt, Attempt.Outcome outcome, List<LeaseStep> steps) {
    if (attempt != withdrawing) {
      return;
    }
    withdrawing = NONE;
    if (deferred != null) {
      endDeferred(attempt, outcome, steps);
      return;
    }
    if (outcome == Attempt.Outcome.FAILED) {
      fail(attempt, null, steps);
      return;
    }
    if (outcome == Attempt.Outcome.GRANTED) {
      granted.add(attempt);
    } else if (stage == Stage.FAST && lastTry) {
      finish(attempt, new LeaseStep.Busy(), Waits.graceEnd(budget, clock.getAsLong()), steps);
      return; // a zero budget tries once: no slow path
    } else {
      steps.add(new LeaseStep.Carry(attempt)); // told nothing: the next lease carries it on
      carrying = true;
      stage = Stage.MUTEX;
    }
    if (stage == Stage.MUTEX && granted.size() < qty) {
      giveBackLeases(steps); // none held while queueing for the mutex: see the notes
    }
    next(steps);
  }

  /** The mutex or a waiting lease was granted, or failed. */
  private void granted(LeaseEvent.Granted event, List<LeaseStep> steps) {
    int attempt = event.attempt();
    if (stage == Stage.ENDED || stage == Stage.FAST || attempt != current) {
      return; // a fast try is heard of by its verdict
    }
    if (event.failure() != null) {
      fail(attempt, event.failure(), steps);
      return;
    }
    if (stage == Stage.MUTEX && event.lost()) {
      steps.add(new LeaseStep.Release(attempt)); // lost before we heard of the grant
      mutex = NONE; // take it again: no lease of ours waits without it
    } else if (stage == Stage.MUTEX) {
      stage = Stage.LEASE;
    } else {
      granted.add(attempt);
    }
    next(steps);
  }

  /**
   * The mutex was lost (its session ended, its node deleted): no lease of ours may wait without it.
   * A loss is told only after the grant, but may be heard before it (the runner reads the grant's
   * state apart from feeding it): the grant heard later is then stale.
   */
  private void mutexLost(int attempt, List<LeaseStep> steps) {
    if (attempt != mutex || (stage != Stage.LEASE && stage != Stage.MUTEX)) {
      return;
    }
    if (stage == Stage.MUTEX) { // its grant not heard yet: no lease waits under it
      steps.add(new LeaseStep.Release(attempt));
      mutex = NONE;
      next(steps);
      return;
    }
    int waiting = current;
    current = NONE;
    mutex = NONE;
    stage = Stage.MUTEX;
    withdrawing = waiting;
    steps.add(new LeaseStep.Release(attempt));
    steps.add(new LeaseStep.Withdraw(waiting, null));
  }

  private void giveBackLeases(List<LeaseStep> steps) {
    for (int lease : granted) {
      steps.add(new LeaseStep.Release(lease));
    }
    granted.clear();
  }

  // ---- endings: exactly one wins ----

  private void succeed(List<LeaseStep> steps) {
    stage = Stage.ENDED;
    steps.add(new LeaseStep.Succeed(List.copyOf(granted), mutex));
    granted.clear();
    mutex = NONE;
    current = NONE;
  }

  private void fail(int attempt, Throwable known, List<LeaseStep> steps) {
    finish(
        attempt,
        new LeaseStep.Failed(attempt, known),
        clock.getAsLong() + Waits.GRACE_NANOS,
        steps);
  }

  /** Ends without the leases: everything granted and the mutex go back. */
  private void finish(int inFlight, LeaseStep.Cause cause, long answerBy, List<LeaseStep> steps) {
    stage = Stage.ENDED;
    steps.add(new LeaseStep.Finish(inFlight, List.copyOf(granted), mutex, answerBy, cause));
    granted.clear();
    mutex = NONE;
    current = NONE;
  }

  /** The budget ran out: the attempt in flight ends as {@link Waits#expire} says. */
  private void deadline(LeaseEvent.Deadline event, List<LeaseStep> steps) {
    if (stage == Stage.ENDED) {
      return;
    }
    stage = Stage.ENDED;
    graceEnd = Waits.graceEnd(budget, clock.getAsLong()); // a late timer leaves less of it
    if (withdrawing != NONE) {
      deferred = event;
    } else if (current == NONE) {
      finish(NONE, new LeaseStep.Busy(), graceEnd, steps);
    } else {
      expiring = current;
      steps.add(new LeaseStep.Expire(current, graceEnd));
    }
  }

  /** How the attempt in flight ended at the deadline. */
  private void expired(int attempt, Waits.Ending ending, List<LeaseStep> steps) {
    if (attempt != expiring) {
      return;
    }
    expiring = NONE;
    if (ending == Waits.Ending.GRANTED && attempt != mutex) {
      granted.add(attempt);
      if (granted.size() == qty) {
        succeed(steps); // the last lease won the race with the deadline
        return;
      }
    }
    LeaseStep.Cause cause =
        switch (ending) {
          case UNREACHABLE -> new LeaseStep.Unreachable();
          case FAILED -> new LeaseStep.Failed(attempt, null);
          default -> new LeaseStep.Busy();
        };
    finish(attempt, cause, graceEnd, steps);
  }

  /** The caller cancelled: the attempt in flight is withdrawn, then everything goes back. */
  private void cancel(LeaseEvent.Cancel event, List<LeaseStep> steps) {
    if (stage == Stage.ENDED) {
      steps.add(new LeaseStep.CancelRefused());
      return;
    }
    stage = Stage.ENDED;
    graceEnd = clock.getAsLong() + Waits.GRACE_NANOS;
    deferred = event;
    if (withdrawing == NONE && current == NONE) {
      endDeferred(NONE, Attempt.Outcome.WITHDRAWN, steps);
    } else if (withdrawing == NONE) {
      withdrawing = current;
      current = NONE;
      steps.add(new LeaseStep.Withdraw(withdrawing, AcquireOutcome.WITHDRAWN));
    }
  }

  /** The ending that waited for a withdrawal: {@code attempt} ended as {@code outcome}. */
  private void endDeferred(int attempt, Attempt.Outcome outcome, List<LeaseStep> steps) {
    LeaseEvent ending = deferred;
    deferred = null;
    if (outcome == Attempt.Outcome.GRANTED && attempt != mutex) {
      granted.add(attempt); // kept: given back by a cancel, counted by a deadline
    }
    if (ending instanceof LeaseEvent.Cancel cancel) {
      finish(attempt, new LeaseStep.Cancelled(cancel.cleaned(), cancel.reason()), graceEnd, steps);
    } else if (granted.size() == qty) {
      succeed(steps); // the last lease won the race with the deadline
    } else if (outcome == Attempt.Outcome.FAILED) {
      finish(attempt, new LeaseStep.Failed(attempt, null), graceEnd, steps);
    } else {
      finish(attempt, new LeaseStep.Busy(), graceEnd, steps);
    }
  }

  /** For tests: the leases granted and not given back. */
  List<Integer> granted() {
    return List.copyOf(granted);
  }
}

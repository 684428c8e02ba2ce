package io.lockstep.recipes.leader;

import io.lockstep.recipes.locks.LockState;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The rules of one participant of a {@link LeaderElection}: an {@link ElectionEvent} goes in, the
 * {@link ElectionStep}s to take come out. No I/O, no threads, no lock: {@link Election} owns it
 * under its lock and carries the steps out after unlocking.
 */
final class ElectionMachine {
  /*
   * Algorithm notes. While STARTED, at most one of these holds: `waiting` is the attempt in the
   * queue, `leader` the granted term, `releasing` a term given up whose node is being deleted, or a
   * retry is scheduled (`retrying`); none only once the client was closed. Once CLOSED, nothing
   * starts again. The listeners hear every change in the order it was decided: elected, at risk /
   * restored, lost, elected...
   *
   * Repeatedly:
   *   enqueue: an attempt enters the queue (the engine creates the protected node, waits for the
   *     head);
   *   granted: the term starts, its epoch the attempt's fencing token; its hold is read once the
   *     term exists (CheckTerm), so a loss noticed before the term existed is not missed;
   *   the term's AT_RISK, HELD again and LOST (matched by epoch) become at risk, restored, lost;
   *     a lost term ends and the participant queues again;
   *   given up (Leadership.close()): its node is deleted by the caller, then lost is told and the
   *     participant queues again;
   *   failed: the participant queues again after a bounded backoff, unless the client was closed.
   */

  /** Where the participant stands; LATENT until started, CLOSED for good. */
  enum Stage {
    LATENT,
    STARTED,
    CLOSED
  }

  /** What the participant is doing: the rows of the table. */
  enum Situation {
    LATENT,
    /** An attempt is in the queue. */
    WAITING,
    /** It leads, last told HELD. */
    LEADING,
    /** It leads, last told AT_RISK. */
    AT_RISK,
    /** A failed attempt's backoff runs. */
    RETRYING,
    /** A term given up has its node deleted. */
    RELEASING,
    /** Started, and stopped: its client was closed. */
    IDLE,
    CLOSED
  }

  /** No attempt or term. */
  static final int NONE = 0;

  private final Backoff backoff = new Backoff();
  private Stage stage = Stage.LATENT;
  private int waiting = NONE; // the attempt in the queue, not granted yet
  private int leader = NONE; // the current term, from its grant until lost or given up
  private long epoch; // the current term's
  private LockState reported = LockState.HELD; // what the listeners last heard of the term
  private int releasing = NONE; // a term given up, until its node is gone
  private boolean retrying; // a failed attempt's backoff runs
  private CompletableFuture<Leadership> next = new CompletableFuture<>(); // the next term
  private int ids;

  Stage stage() {
    return stage;
  }

  /** The current term, or {@link #NONE}. */
  int leader() {
    return leader;
  }

  /** The attempt in the queue, not granted yet, or {@link #NONE}. */
  int waiting() {
    return waiting;
  }

  /** What {@code leadershipAsync()} callers wait for when no term holds: the next term. */
  CompletableFuture<Leadership> next() {
    return next;
  }

  Situation situation() {
    if (stage != Stage.STARTED) {
      return stage == Stage.LATENT ? Situation.LATENT : Situation.CLOSED;
    }
    if (leader != NONE) {
      return reported == LockState.AT_RISK ? Situation.AT_RISK : Situation.LEADING;
    }
    if (waiting != NONE) {
      return Situation.WAITING;
    }
    if (releasing != NONE) {
      return Situation.RELEASING;
    }
    return retrying ? Situation.RETRYING : Situation.IDLE;
  }

  /**
   * The event's transition: the steps to take, in order.
   *
   * @throws IllegalStateException for a start of an election that was started or closed before
   */
  List<ElectionStep> on(ElectionEvent event) {
    List<ElectionStep> steps = new ArrayList<>(4);
    if (event instanceof ElectionEvent.Start) {
      start(steps);
    } else if (event instanceof ElectionEvent.Close) {
      close(((ElectionEvent.Close) event).reached(), steps);
    } else if (event instanceof ElectionEvent.Granted granted) {
      granted(granted.attempt(), granted.epoch(), steps);
    } else if (event instanceof ElectionEvent.GrantedLost lost) {
      if (lost.attempt() == waiting) {
        waiting = NONE;
        steps.add(new ElectionStep.Release(lost.attempt()));
        enqueue(steps);
      }
    } else if (event instanceof ElectionEvent.Failed failed) {
      failed(failed, steps);
    } else if (event instanceof ElectionEvent.StateChanged changed) {
      stateChanged(changed.token(), changed.state(), steps);
    } else if (event instanceof ElectionEvent.Relinquish relinquish) {
      if (relinquish.term() == leader) {
        leader = NONE;
        releasing = relinquish.term(); // the caller deletes the node, then says Released
      }
    } else if (event instanceof ElectionEvent.Released released) {
      released(released.term(), steps);
    } else if (event instanceof ElectionEvent.RetryDue && retrying) {
      retrying = false;
      enqueueIfIdle(steps);
    }
    return steps;
  }

  private void start(List<ElectionStep> steps) {
    if (stage == Stage.CLOSED) {
      throw new IllegalStateException("closed");
    }
    if (stage == Stage.STARTED) {
      throw new IllegalStateException("already started");
    }
    stage = Stage.STARTED;
    enqueue(steps);
  }

  private void close(CompletableFuture<Void> reached, List<ElectionStep> steps) {
    if (stage == Stage.CLOSED) {
      return;
    }
    stage = Stage.CLOSED;
    int term = leader;
    if (term != NONE) {
      steps.add(new ElectionStep.TermClosed(term));
      steps.add(new ElectionStep.Tell(ElectionStep.News.LOST, term));
    }
    steps.add(new ElectionStep.Fail(next, ElectionStep.Ending.CLOSED));
    // A term given up has its node deleted by its giver: the close waits for that delete too.
    steps.add(new ElectionStep.Leave(waiting, term != NONE ? term : releasing, reached));
    waiting = NONE;
    leader = NONE;
  }

  private void enqueue(List<ElectionStep> steps) {
    waiting = ++ids;
    steps.add(new ElectionStep.Enqueue(waiting));
  }

  private void enqueueIfIdle(List<ElectionStep> steps) {
    if (stage == Stage.STARTED
        && waiting == NONE
        && leader == NONE
        && releasing == NONE
        && !retrying) {
      enqueue(steps);
    }
  }

  private void granted(int attempt, long grantEpoch, List<ElectionStep> steps) {
    if (attempt != waiting) {
      return; // withdrawn by close, which releases a grant that raced it
    }
    waiting = NONE;
    leader = attempt;
    epoch = grantEpoch;
    reported = LockState.HELD;
    backoff.reset();
    steps.add(new ElectionStep.NewTerm(attempt, grantEpoch));
    steps.add(new ElectionStep.Tell(ElectionStep.News.ELECTED, attempt));
    steps.add(new ElectionStep.Complete(next, attempt));
    next = new CompletableFuture<>();
    steps.add(new ElectionStep.CheckTerm(attempt));
  }

  private void failed(ElectionEvent.Failed failed, List<ElectionStep> steps) {
    if (failed.attempt() != waiting) {
      return;
    }
    waiting = NONE;
    if (failed.clientClosed()) {
      steps.add(new ElectionStep.Fail(next, ElectionStep.Ending.CLIENT_CLOSED));
      next = new CompletableFuture<>();
      return;
    }
    retrying = true;
    steps.add(new ElectionStep.RetryLater(backoff.next(), failed.failure()));
  }

  private void stateChanged(long token, LockState state, List<ElectionStep> steps) {
    if (leader == NONE || token != epoch) {
      return;
    }
    if (state == LockState.AT_RISK && reported != LockState.AT_RISK) {
      reported = LockState.AT_RISK;
      steps.add(new ElectionStep.Tell(ElectionStep.News.AT_RISK, leader));
    } else if (state == LockState.HELD && reported == LockState.AT_RISK) {
      reported = LockState.HELD;
      steps.add(new ElectionStep.Tell(ElectionStep.News.RESTORED, leader));
    } else if (state == LockState.LOST) {
      int term = leader;
      leader = NONE;
      steps.add(new ElectionStep.TermLost(term));
      steps.add(new ElectionStep.Tell(ElectionStep.News.LOST, term));
      enqueueIfIdle(steps);
    } // RELEASED: we let go ourselves, and said so
  }

  private void released(int term, List<ElectionStep> steps) {
    if (term != releasing) {
      return;
    }
    releasing = NONE;
    steps.add(new ElectionStep.Tell(ElectionStep.News.LOST, term));
    enqueueIfIdle(steps);
  }
}

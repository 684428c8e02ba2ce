package io.lockstep.recipes.internal.owner;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.lockstep.recipes.internal.engine.Acquisition;
import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.Observation;
import io.lockstep.recipes.internal.engine.Phase;
import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.locks.AcquireOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One request for {@code qty} leases of a counting semaphore, driven by the engine's callbacks: no
 * thread waits in it. Its future completes with the granted attempts, or fails with a {@link
 * TimeoutException}, a {@link io.lockstep.recipes.locks.LockUnreachableException}, a {@link
 * CancellationException} or the engine's failure, and then nothing it made is left (within the
 * budget's grace, while ZooKeeper is reachable; the engine's guaranteed deletes go on after that).
 */
final class LeaseRequest {
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
   * the mutex; complete. The deadline (Waits.expire on the attempt in flight), a cancel, a failure
   * or the mutex's loss end any stage; exactly one ending wins, under `lock` (`ended`), and gives
   * back every lease granted so far and the mutex.
   *
   * The mutex lost while a lease waits (its session ended): the lease is withdrawn (or kept if it
   * was granted first) and the mutex taken again, so no lease of ours waits without it.
   *
   * Observers hear one acquisition per lease: a fast try or waiting lease withdrawn to queue is
   * withdrawn untold, and its Observation (`carried`) is carried on by the next LEASE attempt, or
   * ended with the request's outcome by `finish`. The mutex is unobserved.
   */

  private enum Stage {
    FAST,
    MUTEX,
    LEASE
  }

  private final Leases leases;
  private final int qty;
  private final long timeoutNanos; // the budget, or negative for none
  private final long startNanos; // when the caller called
  private final CompletableFuture<List<Attempt>> done = new CompletableFuture<>();
  private final ReentrantLock lock = new ReentrantLock();

  @GuardedBy("lock")
  private final List<Attempt> granted = new ArrayList<>(); // leases granted so far

  @GuardedBy("lock")
  private Stage stage = Stage.FAST;

  @GuardedBy("lock")
  private Attempt current; // the attempt in flight; null while the mutex is taken again

  @GuardedBy("lock")
  private Attempt mutex; // from the mutex attempt's start until given back

  @GuardedBy("lock")
  private Observation carried; // a withdrawn lease's acquisition, until a lease carries it on

  @GuardedBy("lock")
  private boolean ended; // success, deadline, cancel or failure: nothing new starts

  private LeaseRequest(Leases leases, int qty, long timeoutNanos, long startNanos) {
    this.leases = leases;
    this.qty = qty;
    this.timeoutNanos = timeoutNanos;
    this.startNanos = startNanos;
  }

  /**
   * Starts a request; the budget starts at {@code startNanos}.
   *
   * @param timeoutNanos the budget, or a negative value for none
   */
  static LeaseRequest start(Leases leases, int qty, long timeoutNanos, long startNanos) {
    LeaseRequest request = new LeaseRequest(leases, qty, timeoutNanos, startNanos);
    request.next();
    if (timeoutNanos >= 0 && timeoutNanos != Long.MAX_VALUE) {
      long left = Waits.remaining(timeoutNanos, startNanos);
      leases.scheduler().schedule(TimeUnit.NANOSECONDS.toMillis(left), request::deadline);
    }
    return request;
  }

  /** Completes with the granted leases, or fails; see the class comment. */
  CompletableFuture<List<Attempt>> done() {
    return done;
  }

  // ---- the stages ----

  /** Starts the next attempt, or completes with every lease granted. */
  private void next() {
    Attempt started;
    Stage as;
    lock.lock();
    try {
      if (ended) {
        return;
      }
      if (granted.size() == qty) {
        succeed();
        return;
      }
      as = stage;
      if (as == Stage.MUTEX) {
        MutexLoss hooks = new MutexLoss(this::mutexLost);
        started = leases.startMutex(hooks);
        hooks.attempt = started;
        mutex = started;
      } else {
        started = leases.startLease(as == Stage.LEASE ? carried : null);
        carried = as == Stage.LEASE ? null : carried;
      }
      current = started;
    } finally {
      lock.unlock();
    }
    if (as == Stage.FAST) {
      Callbacks.when(started.decided(), (v, f) -> fastDecided(started));
    } else {
      Callbacks.when(started.grantedFuture(), (v, f) -> granted(started, f));
    }
  }

  /** A fast try's first verdict: granted, or "wait": withdrawn before its watch is armed. */
  private void fastDecided(Attempt attempt) {
    lock.lock();
    try {
      if (ended || current != attempt) {
        return; // the deadline or a cancel took it over
      }
      boolean once = timeoutNanos >= 0 && Waits.remaining(timeoutNanos, startNanos) == 0;
      Attempt.Outcome outcome = attempt.withdraw(once ? AcquireOutcome.TIMED_OUT : null);
      if (outcome == Attempt.Outcome.GRANTED) {
        granted.add(attempt);
      } else if (outcome == Attempt.Outcome.FAILED) {
        fail(attempt.failure(), attempt);
        return;
      } else if (once) {
        ended = true; // a zero budget tries once: no slow path
        finish(
            giveBack(attempt.cleanedUp()),
            System.nanoTime() + Waits.GRACE_NANOS,
            CompletableFuture.completedFuture(leases.busy()));
        return;
      } else {
        carried = ((Acquisition) attempt).observation(); // told nothing: the wait carries it on
        giveBackLeases(); // none held while queueing for the mutex: see the notes
        stage = Stage.MUTEX;
      }
    } finally {
      lock.unlock();
    }
    next();
  }

  /** The mutex or a waiting lease was granted, or failed. */
  private void granted(Attempt attempt, Throwable failure) {
    lock.lock();
    try {
      if (ended || current != attempt) {
        return;
      }
      if (failure != null) {
        fail(failure, attempt);
        return;
      }
      if (stage == Stage.MUTEX && attempt.phase() == Phase.LOST) {
        var unusedRelease = attempt.releaseAsync(); // lost before we heard of the grant
        mutex = null; // take it again: no lease of ours waits without it
      } else if (stage == Stage.MUTEX) {
        stage = Stage.LEASE;
      } else {
        granted.add(attempt);
      }
    } finally {
      lock.unlock();
    }
    next();
  }

  /** The mutex was lost (its session ended): no lease of ours may wait without it. */
  private void mutexLost(Attempt lost) {
    Attempt waiting;
    lock.lock();
    try {
      if (ended || mutex != lost || stage != Stage.LEASE) {
        return;
      }
      waiting = current;
      current = null;
      mutex = null;
      stage = Stage.MUTEX;
      carried = ((Acquisition) waiting).observation(); // an ending before the next lease tells it
    } finally {
      lock.unlock();
    }
    Attempt.Outcome outcome = waiting.withdraw(null);
    var unusedRelease = lost.releaseAsync();
    lock.lock();
    try {
      if (ended) {
        if (outcome == Attempt.Outcome.GRANTED) {
          var unusedGiven = waiting.releaseAsync(); // the ending did not see it
        }
        return;
      }
      if (outcome == Attempt.Outcome.GRANTED) {
        granted.add(waiting);
      } else if (outcome == Attempt.Outcome.FAILED) {
        fail(waiting.failure(), waiting);
        return;
      }
      if (granted.size() < qty) {
        giveBackLeases(); // none held while queueing for the mutex
      }
    } finally {
      lock.unlock();
    }
    next();
  }

  @GuardedBy("lock")
  private void giveBackLeases() { // the leases granted so far, when the request queues again
    for (Attempt lease : granted) {
      var unused = lease.releaseAsync();
    }
    granted.clear();
  }

  // ---- endings: exactly one wins, under the lock ----

  @GuardedBy("lock")
  private void succeed() {
    ended = true;
    List<Attempt> holds = List.copyOf(granted);
    Attempt heldMutex = mutex;
    mutex = null;
    if (heldMutex == null) {
      done.complete(holds);
      return;
    }
    // Curator's waiters queue for the mutex: let it go, and return once its node is gone.
    Callbacks.when(
        Waits.within(
            heldMutex.releaseAsync(),
            leases.unreachable(),
            leases.connectionTimeoutNanos(),
            leases.scheduler()),
        (v, f) -> done.complete(holds));
  }

  /** Ends the request with {@code failed}'s failure ({@code failure}, if already known). */
  @GuardedBy("lock")
  private void fail(Throwable failure, Attempt failed) {
    ended = true;
    CompletableFuture<Void> cleanup = giveBack(failed.cleanedUp());
    finish(cleanup, System.nanoTime() + Waits.GRACE_NANOS, leases.failureOf(failure, failed));
  }

  /** The budget ran out: the attempt in flight ends as {@link Waits#expire} says. */
  private void deadline() {
    Attempt inFlight;
    lock.lock();
    try {
      if (ended) {
        return;
      }
      ended = true;
      inFlight = current;
    } finally {
      lock.unlock();
    }
    long graceEnd = System.nanoTime() + Waits.GRACE_NANOS;
    if (inFlight == null) {
      timedOut(null, Waits.Ending.TIMED_OUT, graceEnd);
      return;
    }
    Callbacks.when(Waits.expire(inFlight), (ending, f) -> timedOut(inFlight, ending, graceEnd));
  }

  private void timedOut(Attempt inFlight, Waits.Ending ending, long graceEnd) {
    lock.lock();
    try {
      if (ending == Waits.Ending.GRANTED && inFlight != mutex) {
        granted.add(inFlight);
        if (granted.size() == qty) {
          succeed(); // the last lease won the race with the deadline
          return;
        }
      }
      CompletableFuture<Void> cleanup =
          giveBack(
              inFlight == null ? CompletableFuture.completedFuture(null) : inFlight.cleanedUp());
      finish(cleanup, graceEnd, leases.failureOf(ending, inFlight, timeoutNanos));
    } finally {
      lock.unlock();
    }
  }

  /**
   * Cancels the request unless it ended first (then returns null): withdraws the attempt in flight,
   * gives back what was granted; completes once nothing is left (within the grace, if reachable).
   */
  CompletableFuture<Void> cancel() {
    Attempt inFlight;
    lock.lock();
    try {
      if (ended) {
        return null;
      }
      ended = true;
      inFlight = current;
    } finally {
      lock.unlock();
    }
    Attempt.Outcome outcome =
        inFlight == null ? Attempt.Outcome.WITHDRAWN : inFlight.withdraw(AcquireOutcome.WITHDRAWN);
    long graceEnd = System.nanoTime() + Waits.GRACE_NANOS;
    lock.lock();
    try {
      if (outcome == Attempt.Outcome.GRANTED && inFlight != mutex) {
        granted.add(inFlight);
      }
      CompletableFuture<Void> cleanup =
          giveBack(
              inFlight == null ? CompletableFuture.completedFuture(null) : inFlight.cleanedUp());
      CompletableFuture<Void> bounded =
          Waits.within(cleanup, leases.unreachable(), Waits.GRACE_NANOS, leases.scheduler());
      finish(
          cleanup,
          graceEnd,
          CompletableFuture.completedFuture(
              new CancellationException("the lease request was cancelled")));
      return bounded;
    } finally {
      lock.unlock();
    }
  }

  /** Gives back every lease granted and the mutex; {@code inFlight}: the in-flight's cleanup. */
  @GuardedBy("lock")
  private CompletableFuture<Void> giveBack(CompletableFuture<Void> inFlight) {
    List<CompletableFuture<Void>> pending = new ArrayList<>();
    pending.add(inFlight);
    for (Attempt lease : granted) {
      pending.add(lease.releaseAsync());
    }
    granted.clear();
    if (mutex != null) {
      pending.add(mutex.phase().wasGranted() ? mutex.releaseAsync() : mutex.cleanedUp());
      mutex = null;
    }
    return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
  }

  /** Fails the request once its cleanup is done, or the grace ends, or ZooKeeper is unreachable. */
  @GuardedBy("lock")
  private void finish(
      CompletableFuture<Void> cleanup, long graceEnd, CompletableFuture<Throwable> failure) {
    CompletableFuture<Void> bounded =
        Waits.within(
            cleanup, leases.unreachable(), graceEnd - System.nanoTime(), leases.scheduler());
    Observation untold = carried; // no lease carried it on: observers hear the request's outcome
    carried = null;
    Callbacks.when(
        bounded.thenCombine(failure, (v, f) -> f),
        (f, g) -> {
          Throwable why = f != null ? f : g;
          if (untold != null) {
            untold.end(Leases.outcomeOf(why));
          }
          done.completeExceptionally(why);
        });
  }
}

package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Acquisition;
import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.internal.engine.CallerContext;
import io.lockstep.recipes.internal.engine.Guarded;
import io.lockstep.recipes.internal.engine.Observation;
import io.lockstep.recipes.internal.engine.Outbox;
import io.lockstep.recipes.internal.engine.Phase;
import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.internal.zk.ZkRequests;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockUnreachableException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;

/**
 * One request for {@code qty} leases of a counting semaphore, driven by the engine's callbacks: no
 * thread waits in it. Its future completes with the granted attempts, or fails with a {@link
 * TimeoutException}, a {@link io.lockstep.recipes.locks.LockUnreachableException}, a {@link
 * CancellationException} or the engine's failure, and then nothing it made is left (within the
 * budget's grace, while ZooKeeper is reachable; the engine's guaranteed deletes go on after that).
 *
 * <p>The rules are {@link LeaseMachine}'s; this class feeds it the attempts' news under its lock
 * and carries out its steps in order, after unlocking ({@link Outbox}): it starts, withdraws and
 * releases attempts, and completes the caller's future. A withdrawal runs at once in the thread
 * whose event asked for it, never behind another thread's drain, once the attempt it names has
 * started (right behind its start, if that is still under way).
 */
final class LeaseRequest {
  private final Leases leases;
  private final Budget budget;
  private final long timeoutNanos; // the budget, or negative for none
  private final Guarded<LeaseMachine> machine;

  private final Outbox<LeaseStep> outbox = new Outbox<>(this::run);
  private final Map<Integer, Attempt> attempts = new ConcurrentHashMap<>(); // by the machine's ids
  private final CompletableFuture<List<Attempt>> done = new CompletableFuture<>();
  private Observation carried; // only the outbox's steps, one at a time, touch it
  // Made in the caller's thread (start): every lease attempt starts carrying it, most of them on
  // Lockstep's or ZooKeeper's threads, so observers hear each start as if in the caller's thread.
  private final CallerContext caller = CallerContext.capture();

  private LeaseRequest(Leases leases, Budget budget, LeaseMachine machine) {
    this.leases = leases;
    this.budget = budget;
    this.timeoutNanos = budget.timeoutNanos();
    this.machine = new Guarded<>(machine);
  }

  /** Starts a request within {@code budget}; its deadline is an event of the machine's. */
  static LeaseRequest start(Leases leases, int qty, Budget budget) {
    LeaseRequest request =
        new LeaseRequest(leases, budget, new LeaseMachine(qty, budget, leases::now));
    request.on(new LeaseEvent.Begin());
    budget.underWay();
    budget.atDeadline(leases.scheduler(), () -> request.on(new LeaseEvent.Deadline()));
    return request;
  }

  /** Completes with the granted leases, or fails; see the class comment. */
  CompletableFuture<List<Attempt>> done() {
    return done;
  }

  /**
   * Cancels the request unless it ended first (then returns null): withdraws the attempt in flight,
   * gives back what was granted; completes once nothing is left (within the grace, if reachable).
   */
  CompletableFuture<Void> cancel() {
    return cancel(null);
  }

  /** As {@link #cancel()}; the request fails with {@code reason} (null: a cancellation). */
  CompletableFuture<Void> cancel(RuntimeException reason) {
    CompletableFuture<Void> cleaned = new CompletableFuture<>();
    return on(new LeaseEvent.Cancel(cleaned, reason)) ? cleaned : null;
  }

  /**
   * Feeds {@code event} to the machine and carries out its steps.
   *
   * @return false if the machine refused a cancel: the request had ended
   */
  private boolean on(LeaseEvent event) {
    boolean[] drain = {false};
    LeaseStep[] withdrawNow = {null}; // at most one withdraw per event
    List<LeaseStep> steps =
        machine.apply(
            m -> {
              List<LeaseStep> decided = m.on(event);
              for (LeaseStep step : decided) { // into the outbox in the order decided
                if (step instanceof LeaseStep.Withdraw withdraw
                    && attempts.containsKey(withdraw.attempt())) {
                  withdrawNow[0] = step;
                } else { // a withdraw of an attempt still starting goes behind its start
                  drain[0] |= outbox.add(step);
                }
              }
              return decided;
            });
    boolean refused = false;
    for (LeaseStep step : steps) {
      refused |= step instanceof LeaseStep.CancelRefused;
    }
    if (withdrawNow[0] != null) {
      // In this thread, not behind another thread's drain: a fast try's verdict is heard in the
      // engine's thread right before it arms the try's watch, and withdrawn now it arms none.
      run(withdrawNow[0]);
    }
    if (drain[0]) {
      drain(steps);
    }
    return !refused;
  }

  /**
   * Carries out the steps queued: here, or on the scheduler when this is ZooKeeper's event thread
   * and one of the steps {@code decided} starts an attempt whose create would ask the client's
   * ACLProvider (the mutex's first create, after a verdict heard there), as the engine's {@code
   * Enqueuer} sends a create with its directories. Only then: once a queue's node shape is
   * resolved, no user code runs in a start (observers hear {@code attemptStarted} through the
   * attempt's notifier), and the request's progress does not wait for Lockstep's shared pool.
   */
  private void drain(List<LeaseStep> decided) {
    if (ZkRequests.onEventThread() && asksAclProvider(decided)) {
      try {
        leases.execute(outbox::drain);
        return;
      } catch (RuntimeException refused) {
        // drained here after all
      }
    }
    outbox.drain();
  }

  private boolean asksAclProvider(List<LeaseStep> decided) {
    for (LeaseStep step : decided) {
      if (leases.asksAclProvider(step)) {
        return true;
      }
    }
    return false;
  }

  /** Carries out one step; none blocks. */
  private void run(LeaseStep step) {
    if (step instanceof LeaseStep.StartFast fast) {
      int id = fast.attempt();
      Attempt attempt = started(id, caller.carry(() -> leases.startLease(null)));
      Callbacks.when(attempt.decided(), (v, f) -> on(new LeaseEvent.FastDecided(id)));
    } else if (step instanceof LeaseStep.StartMutex start) {
      int id = start.attempt();
      MutexLoss hooks = new MutexLoss(lost -> on(new LeaseEvent.MutexLost(id)));
      hooks.attempt = started(id, leases.startMutex(hooks));
      whenGranted(id, hooks.attempt);
    } else if (step instanceof LeaseStep.StartLease start) {
      Observation carry = start.carry() ? carried : null;
      carried = start.carry() ? null : carried;
      Attempt lease = caller.carry(() -> leases.startLease(carry));
      whenGranted(start.attempt(), started(start.attempt(), lease));
    } else if (step instanceof LeaseStep.Carry carry) {
      carried = ((Acquisition) attempt(carry.attempt())).observation();
    } else if (step instanceof LeaseStep.Withdraw withdraw) {
      Attempt.Outcome outcome = attempt(withdraw.attempt()).withdraw(withdraw.reason());
      on(new LeaseEvent.Withdrawn(withdraw.attempt(), outcome));
    } else if (step instanceof LeaseStep.Release release) {
      var unused = attempt(release.attempt()).releaseAsync();
    } else if (step instanceof LeaseStep.Expire expire) {
      int id = expire.attempt();
      Callbacks.when(
          Waits.expire(attempt(id), expire.graceEnd()),
          (ending, f) -> on(new LeaseEvent.Expired(id, ending)));
    } else if (step instanceof LeaseStep.Succeed succeed) {
      succeed(succeed);
    } else if (step instanceof LeaseStep.Finish finish) {
      finish(finish);
    } // CancelRefused: nothing to do
  }

  private Attempt started(int id, Attempt attempt) {
    attempts.put(id, attempt);
    return attempt;
  }

  private Attempt attempt(int id) {
    return attempts.get(id);
  }

  private void whenGranted(int id, Attempt attempt) {
    Callbacks.when(
        attempt.grantedFuture(),
        (v, f) -> on(new LeaseEvent.Granted(id, f, f == null && attempt.phase() == Phase.LOST)));
  }

  private void succeed(LeaseStep.Succeed step) {
    List<Attempt> holds = new ArrayList<>(step.leases().size());
    for (int lease : step.leases()) {
      holds.add(attempt(lease));
    }
    if (step.mutex() == LeaseMachine.NONE) {
      done.complete(List.copyOf(holds));
      return;
    }
    // Curator's waiters queue for the mutex: let it go, and return once its node is gone, or at
    // the end of a timed call's grace at the latest (the delete goes on in the background).
    Callbacks.when(
        Waits.within(
            attempt(step.mutex()).releaseAsync(),
            leases.unreachable(),
            mutexReleaseWaitNanos(),
            leases.scheduler()),
        (v, f) -> done.complete(List.copyOf(holds)));
  }

  /** How long a granted request waits for its mutex's delete: within the call's grace, if timed. */
  private long mutexReleaseWaitNanos() {
    long connection = leases.connectionTimeoutNanos();
    if (!budget.bounded()) {
      return connection;
    }
    long left = budget.remainingNanos();
    long untilGraceEnd =
        left > 0
            ? left + Waits.GRACE_NANOS
            : Math.max(0, Waits.GRACE_NANOS - budget.overdueNanos());
    return Math.min(connection, untilGraceEnd);
  }

  /** Gives everything back, and fails once the cleanup is done or the grace ends. */
  private void finish(LeaseStep.Finish step) {
    List<CompletableFuture<Void>> pending = new ArrayList<>();
    if (step.inFlight() != LeaseMachine.NONE) {
      pending.add(attempt(step.inFlight()).cleanedUp());
    }
    for (int lease : step.leases()) {
      pending.add(attempt(lease).releaseAsync());
    }
    if (step.mutex() != LeaseMachine.NONE) {
      Attempt mutex = attempt(step.mutex());
      pending.add(mutex.phase().wasGranted() ? mutex.releaseAsync() : mutex.cleanedUp());
    }
    CompletableFuture<Void> cleanup =
        CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
    CompletableFuture<Void> bounded =
        Waits.within(
            cleanup, leases.unreachable(), step.graceEnd() - leases.now(), leases.scheduler());
    if (step.cause() instanceof LeaseStep.Cancelled cancelled) {
      Callbacks.when(bounded, (v, f) -> cancelled.cleaned().complete(null));
    }
    Observation untold = carried; // no lease carried it on: observers hear the request's outcome
    carried = null;
    Callbacks.when(
        bounded.thenCombine(failureOf(step.cause()), (v, why) -> why),
        (why, f) -> {
          Throwable failure = why != null ? why : f;
          if (untold != null) {
            untold.end(outcomeOf(failure));
          }
          done.completeExceptionally(failure);
        });
  }

  private CompletableFuture<Throwable> failureOf(LeaseStep.Cause cause) {
    if (cause instanceof LeaseStep.Failed failed) {
      return failureOf(failed.known(), attempt(failed.attempt()));
    }
    return CompletableFuture.completedFuture(
        cause instanceof LeaseStep.Unreachable
            ? leases.unreachableFailure(timeoutNanos)
            : cause instanceof LeaseStep.Cancelled cancelled
                ? cancelled.reason() != null
                    ? cancelled.reason()
                    : new CancellationException("the lease request was cancelled")
                : leases.busy());
  }

  /**
   * The failure of an attempt that ended failed ({@code known}, if already known): its state may
   * say FAILED before its future does, so the future is what is waited for.
   */
  private CompletableFuture<Throwable> failureOf(Throwable known, Attempt failed) {
    if (known != null) {
      return CompletableFuture.completedFuture(Retries.unwrap(known));
    }
    return failed
        .grantedFuture()
        .handle(
            (v, f) ->
                f != null
                    ? Retries.unwrap(f)
                    : new LockException("Semaphore " + leases.description() + ": failed", null));
  }

  /** What observers hear of a request that failed with {@code failure}. */
  private static AcquireOutcome outcomeOf(Throwable failure) {
    if (failure instanceof TimeoutException) {
      return AcquireOutcome.TIMED_OUT;
    }
    if (failure instanceof CancellationException) {
      return AcquireOutcome.WITHDRAWN;
    }
    return failure instanceof LockUnreachableException
        ? AcquireOutcome.UNREACHABLE
        : AcquireOutcome.FAILED;
  }
}

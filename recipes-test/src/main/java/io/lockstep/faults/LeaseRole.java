package io.lockstep.faults;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockUnreachableException;
import io.lockstep.testing.LockPart;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One thread of a worker that takes leases of the group's {@link CountingSemaphore}, one at a time:
 * {@code tryHold(budget)} or, now and then, an untimed {@code acquire()}; fenced writes to its own
 * resource while it holds; {@code close()}. A lease has no listener: its state is read every 5 ms
 * while held, by another thread, and each change reported as a {@code state} event.
 */
final class LeaseRole implements Runnable {
  private final RoleContext context;
  private final String thread;
  private final Random random;
  private final String lockPath; // real
  private final WriteTarget target;
  private final HoldLoop loop;
  private final CountingSemaphore semaphore;
  private int holds;

  LeaseRole(RoleContext context, int index) {
    this.context = context;
    this.thread = "t" + index;
    this.random = context.random(index);
    WorkerSpec spec = context.spec;
    String name = spec.locks().get(0);
    this.lockPath = spec.realLockPath(name);
    this.target = WriteTarget.shared(spec, name, thread);
    this.loop = new HoldLoop(context.events, thread, spec.pacing());
    this.semaphore =
        new CountingSemaphore(context.client, spec.clientPath(lockPath), spec.leases());
  }

  @Override
  public void run() {
    try {
      context.writes.ensureDataNode(target);
      while (!context.quiescing()) {
        try {
          operate();
        } catch (RuntimeException e) {
          context.events.error(thread, e);
        }
        TimeUnit.MILLISECONDS.sleep(context.spec.pacing().rest(random));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      context.events.error(thread, e);
    }
  }

  private void operate() throws InterruptedException {
    int budget = context.spec.pacing().budget(random);
    context.events.send("want", thread, budget);
    long mark = context.connection.mark();
    CallWatch.Call call = context.calls.watch(thread, budget);
    Optional<LockHold> lease;
    RoleContext.Outcome outcome;
    try {
      lease =
          budget < 0
              ? Optional.of(semaphore.acquire())
              : semaphore.tryHold(Duration.ofMillis(budget));
      outcome = lease.isPresent() ? RoleContext.Outcome.ACQUIRED : RoleContext.Outcome.TIMED_OUT;
    } catch (LockUnreachableException e) {
      lease = Optional.empty();
      outcome = RoleContext.Outcome.UNREACHABLE;
    } catch (LockException e) {
      lease = Optional.empty();
      outcome = RoleContext.Outcome.FAILED;
    }
    context.attempt(thread, outcome, call.end(), budget, mark);
    if (lease.isPresent()) {
      hold(lease.get());
    }
    context.events.send("idle", thread);
  }

  private void hold(LockHold lease) throws InterruptedException {
    String holdKey = context.spec.worker() + "." + thread + "." + ++holds;
    long token;
    try {
      token = lease.fencingToken();
    } catch (RuntimeException lostAlready) {
      token = 0;
    }
    long session = Sessions.id(context.client);
    LockState first = lease.state();
    boolean counting = token != 0 && session != 0 && first == LockState.HELD;
    int planned = context.spec.pacing().hold(random);
    context.events.send(
        "granted",
        thread,
        holdKey,
        token,
        Long.toHexString(session),
        counting ? 1 : 0,
        planned,
        RoleContext.encodeParts(List.of(LockPart.mutex(lockPath))),
        1);
    Polled state = new Polled(lease, holdKey, first);
    if (first != LockState.HELD) {
      context.events.send("state", thread, holdKey, first);
    }
    ScheduledFuture<?> watch =
        context.poller.scheduleWithFixedDelay(state::poll, 5, 5, TimeUnit.MILLISECONDS);
    try {
      if (token != 0) {
        long leaseToken = token;
        loop.hold(
            holdKey,
            planned,
            () ->
                context.writes.write(
                    thread, holdKey, List.of(target), leaseToken, lease::ownershipChecks),
            state);
      }
    } finally {
      watch.cancel(false);
      state.poll();
      context.events.send("end", thread, holdKey);
      long start = System.nanoTime();
      try {
        lease.close();
      } catch (RuntimeException e) {
        context.events.error(thread, e);
      }
      context.events.send("released", thread, holdKey, System.nanoTime() - start);
    }
  }

  /**
   * A lease's state, read every 5 ms by the worker's poller thread (not the lease's own thread,
   * which may be blocked in a write while the connection is down); each change reported.
   */
  private final class Polled implements HoldState {
    private final LockHold lease;
    private final String holdKey;
    private final ReentrantLock lock = new ReentrantLock();
    private LockState last; // guarded by lock
    private long restoredAt = Long.MIN_VALUE; // guarded by lock

    Polled(LockHold lease, String holdKey, LockState first) {
      this.lease = lease;
      this.holdKey = holdKey;
      this.last = first;
    }

    void poll() {
      lock.lock();
      try {
        LockState now = lease.state();
        if (now == last || now == LockState.RELEASED) {
          return;
        }
        if (now == LockState.HELD && last == LockState.AT_RISK) {
          restoredAt = System.nanoTime();
        }
        last = now;
        context.events.send("state", thread, holdKey, now);
      } finally {
        lock.unlock();
      }
    }

    @Override
    public LockState state() {
      lock.lock();
      try {
        return last;
      } finally {
        lock.unlock();
      }
    }

    @Override
    public boolean restoredSince(long nanos) {
      lock.lock();
      try {
        return restoredAt != Long.MIN_VALUE && restoredAt - nanos >= 0;
      } finally {
        lock.unlock();
      }
    }
  }
}

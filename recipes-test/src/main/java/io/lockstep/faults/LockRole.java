package io.lockstep.faults;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockUnreachableException;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.Library;
import io.lockstep.testing.LockPart;
import io.lockstep.testing.Recipe;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * One thread of a worker that takes a lock object of its own, over and over: acquire (timed or
 * not), fenced writes while held, release, a short rest. Reports every step: {@code want}, {@code
 * attempt}, {@code granted}, {@code state} (through its {@link HoldTracker}), {@code end}, {@code
 * released}, {@code idle}.
 */
final class LockRole implements Runnable {
  private final RoleContext context;
  private final String thread;
  private final Random random;
  private final List<LockPart> parts; // real paths
  private final List<WriteTarget> targets;
  private final HoldTracker tracker;
  private final HoldLoop loop;
  private final FencedLock lock;
  private int holds;

  LockRole(RoleContext context, int index) {
    this.context = context;
    this.thread = "t" + index;
    this.random = context.random(index);
    WorkerSpec spec = context.spec;
    this.parts = parts(spec, index);
    this.targets = new ArrayList<>();
    for (LockPart part : parts) {
      String name = part.path().substring(part.path().lastIndexOf('/') + 1);
      targets.add(
          part.shared()
              ? WriteTarget.shared(spec, name, thread)
              : WriteTarget.exclusive(spec, name));
    }
    this.tracker = new HoldTracker(context.events, thread);
    this.loop = new HoldLoop(context.events, thread, spec.pacing());
    this.lock = newLock();
    lock.getStateListenable().addListener(tracker);
  }

  /** The paths the worker's thread {@code index} locks, with their modes, as real paths. */
  static List<LockPart> parts(WorkerSpec spec, int index) {
    List<LockPart> parts = new ArrayList<>();
    for (String lock : spec.locks()) {
      Recipe mode =
          switch (spec.role()) {
            case NON_REENTRANT -> Recipe.NON_REENTRANT_MUTEX;
            case READ_WRITE -> index % 2 == 0 ? Recipe.WRITE : Recipe.READ;
            case MULTI -> Recipe.valueOf(lock.substring(0, lock.indexOf(':')));
            default -> Recipe.MUTEX;
          };
      String name = spec.role() == RoleKind.MULTI ? lock.substring(lock.indexOf(':') + 1) : lock;
      parts.add(new LockPart(mode, spec.realLockPath(name)));
    }
    return parts;
  }

  private FencedLock newLock() {
    WorkerSpec spec = context.spec;
    List<LockPart> clientParts =
        parts.stream().map(p -> new LockPart(p.mode(), spec.clientPath(p.path()))).toList();
    String path = clientParts.get(0).path();
    return switch (spec.role()) {
      case LOCAL_HANDOFF ->
          ReentrantMutex.builder(context.client, path).localHandoff(spec.handoffBound()).build();
      case LINGER ->
          ReentrantMutex.builder(context.client, path)
              .linger(Duration.ofMillis(spec.lingerMs()))
              .build();
      case MULTI -> (FencedLock) Library.LOCKSTEP.multiLock(context.client, clientParts);
      case MUTEX, NON_REENTRANT, READ_WRITE ->
          (FencedLock) Library.LOCKSTEP.lock(context.client, clientParts.get(0));
      case SEMAPHORE, ELECTION -> throw new IllegalArgumentException("not a lock: " + spec.role());
    };
  }

  @Override
  public void run() {
    try {
      for (WriteTarget target : targets) {
        if (target.shared()) {
          context.writes.ensureDataNode(target);
        }
      }
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
    tracker.acquiring();
    long mark = context.connection.mark();
    CallWatch.Call call = context.calls.watch(thread, budget);
    RoleContext.Outcome outcome;
    try {
      if (budget < 0) {
        lock.acquire();
        outcome = RoleContext.Outcome.ACQUIRED;
      } else {
        outcome =
            lock.acquire(budget, TimeUnit.MILLISECONDS)
                ? RoleContext.Outcome.ACQUIRED
                : RoleContext.Outcome.TIMED_OUT;
      }
    } catch (LockUnreachableException e) {
      outcome = RoleContext.Outcome.UNREACHABLE;
    } catch (LockException e) {
      outcome = RoleContext.Outcome.FAILED;
    }
    context.attempt(thread, outcome, call.end(), budget, mark);
    if (outcome == RoleContext.Outcome.ACQUIRED) {
      hold();
    }
    context.events.send("idle", thread);
  }

  private void hold() throws InterruptedException {
    String holdKey = context.spec.worker() + "." + thread + "." + ++holds;
    long token;
    boolean counting = true;
    try {
      token = lock.fencingToken();
    } catch (LockOwnershipLostException | LockException lostOrUnanswered) {
      token = 0;
      counting = false;
    }
    long session = Sessions.id(context.client);
    int planned = context.spec.pacing().hold(random);
    tracker.begin(
        holdKey, token, session, RoleContext.encodeParts(parts), planned, counting && session != 0);
    try {
      if (token != 0) {
        long holdToken = token;
        loop.hold(
            holdKey,
            planned,
            () -> context.writes.write(thread, holdKey, targets, holdToken, lock::ownershipChecks),
            tracker);
      }
    } finally {
      tracker.end();
      long start = System.nanoTime();
      try {
        lock.release();
      } catch (RuntimeException e) {
        context.events.error(thread, e);
      }
      context.events.send("released", thread, holdKey, System.nanoTime() - start);
    }
  }
}

package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.locks.LockHold;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Supplier;

/**
 * The holds of one lock object that are owned by handles ({@link LockHold}) rather than threads:
 * the blocking {@code hold()} and the asynchronous {@code acquireAsync()}. Each is its own entry in
 * the queue. An asynchronous attempt parks no thread: its future is completed by the engine's
 * callbacks, on the caller's executor, never on ZooKeeper's event thread. Cancelling the future
 * withdraws the attempt; a grant that races the cancel is released, never leaked.
 */
public final class Handles implements HoldSource {
  private final AttemptFactory attempts;
  private final Supplier<List<Slot>> slots;
  private final Revocation revocation;
  private static final AtomicIntegerFieldUpdater<Handles> LIVE =
      AtomicIntegerFieldUpdater.newUpdater(Handles.class, "live");

  private volatile int live; // handed-out handles not closed yet (a field, not a set: per key)

  /**
   * @param slots the queues a handle's attempt enqueues in
   * @param revocation whether acquisitions are revocable, or null if they never are
   */
  public Handles(AttemptFactory attempts, Supplier<List<Slot>> slots, Revocation revocation) {
    this.attempts = attempts;
    this.slots = slots;
    this.revocation = revocation;
  }

  /**
   * Waits for a hold.
   *
   * @param budget the caller's budget, from when it called; none to wait as long as it takes
   * @return the hold, or null if the budget ran out (the attempt was withdrawn)
   */
  @Override
  public LockHold hold(Budget budget) throws InterruptedException {
    Attempt acquisition = take(budget);
    return acquisition == null ? null : register(acquisition);
  }

  /**
   * Starts an attempt and returns at once; {@link Waits#async} is the policy.
   *
   * @param budget the caller's budget, from when it called; or none
   * @param executor completes the future, so runs its dependent stages
   */
  @Override
  public CompletionStage<LockHold> acquireAsync(Budget budget, Executor executor) {
    return Waits.<LockHold>async(
        start(), budget, executor, this::register, hold -> ((Handle) hold).abandon());
  }

  /** What the lock object's attempts share. */
  @Override
  public LockSettings settings() {
    return attempts.settings();
  }

  /**
   * The granted acquisition behind {@code hold}, for the integration packages: a deadline of its
   * own on a handle's hold ({@link Attempt#expire}).
   *
   * @throws IllegalArgumentException if {@code hold} is not a hold of Lockstep's single-engine
   *     locks
   */
  public static Attempt attemptOf(LockHold hold) {
    return handle(hold).acquisition();
  }

  /**
   * Closes {@code hold} without waiting: what its release sends goes on in the background, so this
   * may run on Lockstep's threads, never blocking them on ZooKeeper.
   *
   * @return completes once the hold's nodes are deleted (at once if it was closed before)
   * @throws IllegalArgumentException if {@code hold} is not a hold of Lockstep's single-engine
   *     locks
   */
  public static CompletableFuture<Void> closeAsync(LockHold hold) {
    return handle(hold).closeAsync();
  }

  private static Handle handle(LockHold hold) {
    if (!(hold instanceof Handle handle)) {
      throw new IllegalArgumentException("not a hold of a single-engine Lockstep lock: " + hold);
    }
    return handle;
  }

  /** Hands out a hold for an attempt granted elsewhere: a lease of a counting semaphore. */
  LockHold adopt(Attempt granted) {
    return register(granted);
  }

  @Override
  public Attempt take(Budget budget) throws InterruptedException {
    Attempt acquisition = start();
    return Waits.await(acquisition, budget) ? acquisition : null;
  }

  @Override
  public Attempt takeUninterruptibly() {
    Attempt acquisition = start();
    Waits.awaitUninterruptibly(acquisition);
    return acquisition;
  }

  /** Whether a handle of this lock object holds the lock. */
  @Override
  public boolean any() {
    return live > 0;
  }

  @Override
  public void close() {
    attempts.close();
  }

  /** A handle was closed. */
  void forget() {
    LIVE.decrementAndGet(this);
  }

  private Attempt start() {
    Runnable handler = revocation == null ? null : revocation.handler();
    return attempts.start(slots.get(), handler);
  }

  private Handle register(Attempt acquisition) {
    Handle handle = new Handle(acquisition, this);
    LIVE.incrementAndGet(this);
    return handle;
  }
}

package io.lockstep.recipes.spring;

import io.lockstep.recipes.internal.owner.OwnershipAccess;
import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockView;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.function.Supplier;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * The lock of one key of a {@link LockstepLockRegistry}: Spring Integration's {@link
 * DistributedLock} over a {@link io.lockstep.recipes.locks.ReentrantMutex} (or, for several keys at
 * once, a {@link io.lockstep.recipes.locks.MultiMutex}: {@link
 * LockstepLockRegistry#obtainAll(java.util.Collection)}), with the methods of its {@link LockView},
 * so the fencing token of the caller's hold is within reach. A hold is owned by the thread that
 * locked, which may lock again and must unlock as often.
 *
 * <pre>{@code
 * import io.lockstep.recipes.spring.LockstepLock;
 * import io.lockstep.recipes.spring.LockstepLockRegistry;
 * import java.time.Duration;
 *
 * LockstepLockRegistry registry = ...; // the service's registry
 * FencedStore store = ...; // your store: refuses stale tokens (docs/getting-started.md)
 * LockstepLock lock = registry.obtain("orders/17");
 * lock.lock(Duration.ofSeconds(30)); // lost, and its node deleted, if held longer
 * try {
 *   store.write("orders/17", "paid", lock.fencingToken());
 * } finally {
 *   lock.unlock(); // ConcurrentModificationException if the time to live ran out
 * }
 * }</pre>
 *
 * <p><b>Time to live.</b> A hold taken with a time to live ({@link #lock(Duration)}, {@link
 * #tryLock(Duration, Duration)}, or any lock method when the registry has a {@link
 * LockstepLockRegistry#setDefaultTtl(Duration) default}) fails safe when it outlives it: its node
 * is deleted (in the background, until it succeeds, if ZooKeeper is unreachable) and the hold turns
 * {@link io.lockstep.recipes.locks.LockState#LOST} at the deadline, so {@link #fencingToken()} and
 * the lock's checks refuse the late holder, the lock's state listeners and observers hear LOST, and
 * another process can take the lock with a greater token. Each lock call, first or reentrant, with
 * a time to live sets the deadline to it from now; {@link LockstepLockRegistry#renewLock(Object,
 * Duration)} moves it. {@link #unlock()} of an expired hold clears it and throws {@link
 * java.util.ConcurrentModificationException}, as Spring's JDBC and Redis registries do; exactly one
 * of an expiry and a racing unlock wins. Without a time to live, a hold lasts until unlocked or
 * lost with its session.
 *
 * <p>Otherwise it behaves as its {@link LockView} (see there, and {@link LockstepLockRegistry} for
 * the failures).
 */
public final class LockstepLock implements DistributedLock {
  private final FencedLock lock;
  private final LockView view;
  private final HoldDeadlines deadlines;
  private final Supplier<Duration> defaultTtl;

  LockstepLock(FencedLock mutex, Supplier<Duration> defaultTtl) {
    this.lock = mutex;
    this.view = mutex.asLock();
    this.deadlines = new HoldDeadlines(OwnershipAccess.of(mutex));
    this.defaultTtl = defaultTtl;
  }

  /**
   * The {@link LockView} this lock works through: the same holds, without time to live.
   *
   * @return the view of the key's mutex
   */
  public LockView lockView() {
    return view;
  }

  /**
   * The lock this is a view of: the key's {@link io.lockstep.recipes.locks.ReentrantMutex}, or the
   * {@link io.lockstep.recipes.locks.MultiMutex} of the keys of {@link
   * LockstepLockRegistry#obtainAll(java.util.Collection)}.
   *
   * @return the fenced lock
   */
  public FencedLock fencedLock() {
    return lock;
  }

  /**
   * The fencing token of the caller's hold; see {@link FencedLock#fencingToken()}.
   *
   * @return the fencing token
   * @throws IllegalMonitorStateException if the caller does not hold the lock
   * @throws io.lockstep.recipes.locks.LockOwnershipLostException if the hold was lost (also when
   *     its time to live ran out)
   */
  public long fencingToken() {
    return view.fencingToken();
  }

  /**
   * A stage that completes when the calling thread's current hold of this lock is lost, as {@link
   * io.lockstep.recipes.locks.LockHold#whenLost()} does for a hold: normally, with the {@link
   * LockOwnershipLostException} its checks throw from then on (session expired, node deleted,
   * client closed, time to live ran out); exceptionally, with a {@link
   * java.util.concurrent.CancellationException}, once the thread's last {@link #unlock()} lets the
   * hold go unlost. A reentrant lock call does not make a new hold: the stage is the same hold's.
   *
   * <p>The stage belongs to the hold, not to the lock object, which every thread of the process
   * shares: it is the stage of the hold the thread has now, the one with the current {@link
   * #fencingToken()}, and a later hold of the same key, by this thread or another, never completes
   * it, nor does another thread's loss. Asked for after the hold was lost, it is complete already.
   * It completes on one of Lockstep's threads, never on ZooKeeper's event thread (see {@code
   * LockHold.whenLost()}), and each call returns a new stage: cancelling it affects nothing else.
   *
   * <pre>{@code
   * import io.lockstep.recipes.spring.LockstepLock;
   * import io.lockstep.recipes.spring.LockstepLockRegistry;
   * import java.util.concurrent.atomic.AtomicBoolean;
   *
   * LockstepLockRegistry registry = ...; // the service's registry
   * Runnable step = ...; // one step of a long job
   * LockstepLock lock = registry.obtain("reports/daily");
   * AtomicBoolean lost = new AtomicBoolean();
   * lock.lock();
   * try {
   *   lock.whenLost().thenRun(() -> lost.set(true)); // this hold's loss, no other's
   *   for (int i = 0; i < 100 && !lost.get(); i++) {
   *     step.run();
   *   }
   * } finally {
   *   lock.unlock();
   * }
   * }</pre>
   *
   * @return a stage completed with the loss of the calling thread's hold, or exceptionally once it
   *     is let go unlost
   * @throws IllegalMonitorStateException if the calling thread does not hold the lock
   */
  public CompletionStage<LockOwnershipLostException> whenLost() {
    return deadlines.whenLost();
  }

  /**
   * Acquires the lock, waiting as long as it takes, as {@link LockView#lock()}; the hold gets the
   * registry's default time to live, if it has one.
   */
  @Override
  public void lock() {
    Duration ttl = defaultTtl.get();
    view.lock();
    deadlines.granted(ttl);
  }

  /**
   * Acquires the lock, waiting as long as it takes, and holds it for at most {@code ttl}.
   *
   * @param ttl the time to live of the hold, positive
   * @throws NullPointerException if {@code ttl} is null
   * @throws IllegalArgumentException if {@code ttl} is not positive
   */
  @Override
  public void lock(Duration ttl) {
    Duration checked = checkTtl(ttl);
    view.lock();
    deadlines.granted(checked);
  }

  /**
   * Acquires the lock unless the thread is interrupted, as {@link LockView#lockInterruptibly()};
   * the hold gets the registry's default time to live, if it has one.
   */
  @Override
  public void lockInterruptibly() throws InterruptedException {
    Duration ttl = defaultTtl.get();
    view.lockInterruptibly();
    deadlines.granted(ttl);
  }

  /**
   * Makes one attempt, as {@link LockView#tryLock()}; the hold gets the registry's default time to
   * live, if it has one.
   */
  @Override
  public boolean tryLock() {
    return granted(view.tryLock(), defaultTtl.get());
  }

  /**
   * Acquires the lock if it is granted within {@code time}, as {@link LockView#tryLock(long,
   * TimeUnit)}; the hold gets the registry's default time to live, if it has one.
   */
  @Override
  public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
    Duration ttl = defaultTtl.get();
    return granted(view.tryLock(time, unit), ttl);
  }

  /**
   * Acquires the lock if it is granted within {@code timeout}, as {@link
   * LockView#tryLock(Duration)}; the hold gets the registry's default time to live, if it has one.
   *
   * @param timeout the longest time to wait; zero or less makes one attempt
   * @return true if the lock was acquired
   * @throws InterruptedException if the thread is interrupted
   */
  public boolean tryLock(Duration timeout) throws InterruptedException {
    Duration ttl = defaultTtl.get();
    return granted(view.tryLock(timeout), ttl);
  }

  /**
   * Acquires the lock if it is granted within {@code waitTime}, and holds it for at most {@code
   * ttl}.
   *
   * @param waitTime the longest time to wait; zero or less makes one attempt
   * @param ttl the time to live of the hold, positive
   * @return true if the lock was acquired
   * @throws InterruptedException if the thread is interrupted
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code ttl} is not positive
   */
  @Override
  public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
    Objects.requireNonNull(waitTime, "waitTime");
    Duration checked = checkTtl(ttl);
    return granted(view.tryLock(waitTime), checked);
  }

  /**
   * Releases the caller's hold (one count of it).
   *
   * @throws IllegalMonitorStateException if the caller does not hold the lock
   * @throws java.util.ConcurrentModificationException if the hold's time to live ran out: it was
   *     lost and its node deleted; the hold is cleared all the same
   */
  @Override
  public void unlock() {
    deadlines.unlock(view::unlock);
  }

  /**
   * Not supported: a ZooKeeper lock has no conditions.
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  public Condition newCondition() {
    return view.newCondition();
  }

  /** Renews the caller's hold; see {@link LockstepLockRegistry#renewLock(Object, Duration)}. */
  void renew(Duration ttl, Object key) {
    deadlines.renew(ttl, key);
  }

  private boolean granted(boolean acquired, Duration ttl) {
    if (acquired) {
      deadlines.granted(ttl);
    }
    return acquired;
  }

  /** A valid time to live: positive, and short enough to count in nanoseconds. */
  static Duration checkTtl(Duration ttl) {
    Objects.requireNonNull(ttl, "ttl");
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive: " + ttl);
    }
    try {
      var unused = ttl.toNanos();
    } catch (ArithmeticException tooLong) {
      throw new IllegalArgumentException(
          "ttl is too long to count in nanoseconds: " + ttl, tooLong);
    }
    return ttl;
  }

  @Override
  public String toString() {
    return "LockstepLock[" + fencedLock() + "]";
  }
}

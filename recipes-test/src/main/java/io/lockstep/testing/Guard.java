package io.lockstep.testing;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockStateListener;
import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.locks.InterProcessLock;

/**
 * The lock of one operation, with the paths it claims while held: a Lockstep lock, whose fencing
 * token and ownership checks fence the holder's writes and whose listeners report risk and loss, or
 * a Curator lock, which has none of them. The demo and the chaos run take every lock through one.
 */
public final class Guard {
  private final InterProcessLock lock;
  private final List<LockPart> parts;

  private Guard(InterProcessLock lock, List<LockPart> parts) {
    this.lock = lock;
    this.parts = List.copyOf(parts);
  }

  /** A single-path lock of {@code library} on {@code part}. */
  public static Guard of(Library library, CuratorFramework client, LockPart part) {
    return new Guard(library.lock(client, part), List.of(part));
  }

  /**
   * A Lockstep mutex or non-reentrant mutex on {@code part} that hands the lock among this client's
   * holders of the path (local handoff), at most {@code maxInARow} times in a row while another
   * participant may wait: {@code ReentrantMutex.builder(client, path).localHandoff(maxInARow)}.
   * Every such lock of one client on one path shares that client's one node in the queue.
   *
   * @throws IllegalArgumentException if {@code part} is neither a mutex nor a non-reentrant mutex
   *     (local handoff is offered for no other recipe), or {@code maxInARow} is less than 1
   */
  public static Guard localHandoff(CuratorFramework client, LockPart part, int maxInARow) {
    InterProcessLock lock =
        switch (part.mode()) {
          case MUTEX -> ReentrantMutex.builder(client, part.path()).localHandoff(maxInARow).build();
          case NON_REENTRANT_MUTEX ->
              NonReentrantMutex.builder(client, part.path()).localHandoff(maxInARow).build();
          default -> throw new IllegalArgumentException("no local handoff for " + part);
        };
    return new Guard(lock, List.of(part));
  }

  /** A multi-lock of {@code library} over {@code parts} ({@link Library#multiLock}). */
  public static Guard multi(Library library, CuratorFramework client, List<LockPart> parts) {
    return new Guard(library.multiLock(client, parts), parts);
  }

  /** The lock itself. */
  public InterProcessLock lock() {
    return lock;
  }

  /** The paths the lock holds, and how. */
  public List<LockPart> parts() {
    return parts;
  }

  /**
   * The lock as a Lockstep lock, whose methods throw narrow exceptions.
   *
   * @throws IllegalStateException if it is a Curator lock
   */
  public FencedLock fencedLock() {
    if (lock instanceof FencedLock fenced) {
      return fenced;
    }
    throw new IllegalStateException("not a Lockstep lock: " + lock);
  }

  /** Whether the lock is fenced (a Lockstep lock). */
  public boolean fenced() {
    return lock instanceof FencedLock;
  }

  /** Acquires, waiting as long as it takes. */
  public void acquire() throws Exception {
    lock.acquire();
  }

  /** Acquires within {@code timeout}; false if the time ran out. */
  public boolean acquire(Duration timeout) throws Exception {
    return lock.acquire(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * The fencing token of the caller's hold; 0 for an unfenced lock.
   *
   * @throws io.lockstep.recipes.locks.LockOwnershipLostException if the hold is known lost
   */
  public long fencingToken() {
    return lock instanceof FencedLock fenced ? fenced.fencingToken() : 0;
  }

  /**
   * The checks to put in a write's transaction so that it commits only while the lock is held;
   * empty for an unfenced lock.
   *
   * @throws io.lockstep.recipes.locks.LockOwnershipLostException if the hold is known lost
   */
  public List<CuratorOp> ownershipChecks() {
    return lock instanceof FencedLock fenced ? fenced.ownershipChecks() : List.of();
  }

  /** Adds a listener to the lock's state changes; an unfenced lock has none to tell. */
  public void addStateListener(LockStateListener listener) {
    if (lock instanceof FencedLock fenced) {
      fenced.getStateListenable().addListener(listener);
    }
  }

  /** Releases the caller's hold. */
  public void release() throws Exception {
    lock.release();
  }

  @Override
  public String toString() {
    return lock.toString();
  }
}

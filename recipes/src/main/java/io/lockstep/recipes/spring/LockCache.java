package io.lockstep.recipes.spring;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockAttempt;
import io.lockstep.recipes.locks.LockObserver;
import io.lockstep.recipes.locks.LockObservers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The locks a {@link LockstepLockRegistry} keeps, by key: every lock in use, and the most recently
 * obtained (or locked) others up to a capacity.
 */
final class LockCache {
  private final ReentrantLock cacheLock = new ReentrantLock(); // held for bookkeeping, never a wait
  private final Supplier<Duration> defaultTtl;

  /** The cached locks by key, least recently obtained (or locked) first. */
  @GuardedBy("cacheLock")
  private final LinkedHashMap<String, Entry> locks = new LinkedHashMap<>(16, 0.75f, true);

  /** How many locks {@link #locks} keeps beyond those in use; at least 1. */
  @GuardedBy("cacheLock")
  private int cacheCapacity = LockstepLockRegistry.DEFAULT_CACHE_CAPACITY;

  /* Algorithm notes:
   *
   * An entry is in use while an attempt of its mutex is under way or a hold of it is not released.
   * A per-lock observer keeps the ids of those attempts: attemptStarted (in the acquiring thread,
   * or with it waiting, before the attempt sends anything) adds one; attemptEnded without a grant,
   * and released, remove it. The engine tells one attempt's callbacks in order, so the set is never
   * short of an attempt in progress; a lost hold stays until its thread unlocks it.
   *
   * The map is a LinkedHashMap in access order under cacheLock, which is held only for bookkeeping:
   * no ZooKeeper call, no mutex made, no wait. Invariants, under cacheLock:
   *   - an entry in use is never removed: eviction and expiry check inUse() and remove under the
   *     lock, and attemptStarted records the attempt before it takes the lock to re-cache its entry;
   *   - an entry in use is in the map, unless another lock of its key was cached after it was
   *     dropped: attemptStarted puts back an entry dropped while nobody used it (a caller kept
   *     the object it obtained and now locks it);
   *   - after an insert, the map holds at most cacheCapacity entries, or only entries in use and
   *     the one just inserted.
   *
   * obtain: look the key up (an access: it becomes the most recent); if absent, make the mutex
   * outside the lock, then insert it unless another thread did first, and evict. Eviction walks
   * from the eldest, removing unused entries while the map is over capacity, skipping those in use
   * and the entry just inserted.
   */

  /** The lock of one key, the attempts and holds under way on it, and when it was last obtained. */
  private final class Entry implements LockObserver {
    final String key;
    final FencedLock mutex; // a ReentrantMutex, or the MultiMutex of several keys
    final LockstepLock lock;
    final Set<Long> active = ConcurrentHashMap.newKeySet(); // attempts under way and holds
    volatile long lastObtainedNanos; // written under cacheLock

    Entry(String key, FencedLock mutex, LockstepLock lock) {
      this.key = key;
      this.mutex = mutex;
      this.lock = lock;
      LockObservers.of(mutex).addListener(this);
    }

    @Override
    public void attemptStarted(LockAttempt attempt) {
      active.add(attempt.id()); // first: an eviction from now on sees the entry in use
      recache(this);
    }

    @Override
    public void attemptEnded(
        LockAttempt attempt, AcquireOutcome outcome, Duration waited, long fencingToken) {
      if (outcome != AcquireOutcome.GRANTED) {
        active.remove(attempt.id());
      }
    }

    @Override
    public void released(LockAttempt attempt, Duration held, long fencingToken) {
      active.remove(attempt.id());
    }

    boolean inUse() {
      return !active.isEmpty() || mutex.isAcquiredInThisProcess();
    }
  }

  /**
   * @param defaultTtl the registry's default time to live of a hold, or null for none
   */
  LockCache(Supplier<Duration> defaultTtl) {
    this.defaultTtl = defaultTtl;
  }

  /**
   * The lock of the cached entry of {@code key}, now the most recently obtained; if there is none,
   * the lock {@code made} makes is cached (evicting beyond capacity) and returned, or null if
   * {@code made} is null.
   */
  LockstepLock cached(String key, FencedLock made) {
    cacheLock.lock();
    try {
      Entry entry = locks.get(key);
      if (entry == null) {
        if (made == null) {
          return null;
        }
        entry = new Entry(key, made, new LockstepLock(made, defaultTtl));
        locks.put(key, entry);
        evictBeyondCapacity(entry);
      }
      entry.lastObtainedNanos = System.nanoTime();
      return entry.lock;
    } finally {
      cacheLock.unlock();
    }
  }

  /**
   * An attempt of {@code entry}'s lock started: it becomes the most recently used, and is cached
   * again if it was dropped while unused and no other lock of its key was cached since.
   */
  private void recache(Entry entry) {
    cacheLock.lock();
    try {
      Entry cached = locks.get(entry.key);
      if (cached == null) {
        locks.put(entry.key, entry);
        evictBeyondCapacity(entry);
      }
    } finally {
      cacheLock.unlock();
    }
  }

  /** Removes unused entries, eldest first, until the capacity is kept; never {@code spared}. */
  @GuardedBy("cacheLock")
  private void evictBeyondCapacity(Entry spared) {
    Iterator<Entry> eldestFirst = locks.values().iterator();
    while (locks.size() > cacheCapacity && eldestFirst.hasNext()) {
      Entry entry = eldestFirst.next();
      if (entry != spared && !entry.inUse()) {
        eldestFirst.remove();
      }
    }
  }

  /** Sets the capacity, and drops the surplus of unused locks at once. */
  void setCapacity(int capacity) {
    cacheLock.lock();
    try {
      cacheCapacity = capacity;
      evictBeyondCapacity(null);
    } finally {
      cacheLock.unlock();
    }
  }

  /** Forgets the locks not in use and last obtained more than {@code ageNanos} ago. */
  void expireUnusedOlderThan(long ageNanos) {
    cacheLock.lock();
    try {
      long now = System.nanoTime();
      locks.values().removeIf(entry -> now - entry.lastObtainedNanos > ageNanos && !entry.inUse());
    } finally {
      cacheLock.unlock();
    }
  }

  /**
   * {@code age} in milliseconds, a fraction of a millisecond counting as a whole one; an age too
   * long to count saturates.
   */
  static long ageMillis(Duration age) {
    try {
      long millis = age.toMillis();
      return !age.isNegative() && age.toNanosPart() % 1_000_000 != 0
          ? Math.addExact(millis, 1)
          : millis;
    } catch (ArithmeticException tooLong) {
      return age.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
  }

  /** The keys of the cached locks, least recently obtained (or locked) first. */
  List<String> keys() {
    cacheLock.lock();
    try {
      return new ArrayList<>(locks.keySet());
    } finally {
      cacheLock.unlock();
    }
  }
}

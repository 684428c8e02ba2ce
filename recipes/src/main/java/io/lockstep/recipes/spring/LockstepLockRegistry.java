package io.lockstep.recipes.spring;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockAttempt;
import io.lockstep.recipes.locks.LockObserver;
import io.lockstep.recipes.locks.LockObservers;
import io.lockstep.recipes.locks.LockView;
import io.lockstep.recipes.locks.ReentrantMutex;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.PathUtils;
import org.springframework.integration.support.locks.ExpirableLockRegistry;

/**
 * A Spring Integration lock registry on Lockstep: the drop-in replacement for Spring's {@code
 * ZookeeperLockRegistry}, handing out the {@link LockView} of a {@link ReentrantMutex} per key, so
 * the fencing token of the caller's hold is within reach.
 *
 * <p><b>Held and owned.</b> {@link #obtain(Object)} returns the same lock object for the same key
 * while it is in use (an acquire under way, or a hold), and while it is cached: among the {@link
 * #setCacheCapacity(int) capacity} most recently obtained or locked, and not dropped by {@link
 * #expireUnusedOlderThan(long)}. Each lock is a {@link ReentrantMutex} seen as a {@link
 * java.util.concurrent.locks.Lock}: a hold is owned by the thread that locked, which may lock again
 * and must unlock as often.
 *
 * <p><b>Keys, paths and order.</b> A key is a {@code String}. Its lock lives at the root, a {@code
 * '/'} unless the root ends with one, and the key: {@code "orders/17"} under the default root is
 * {@code /SpringIntegration-LockRegistry/orders/17} ({@link #pathOf(Object)}). This is the mapping
 * of Spring's {@code ZookeeperLockRegistry} with the same root, and the lock is Curator's {@code
 * InterProcessMutex} queue on that path, first come first served: while a service rolls from
 * Spring's registry to this one, old and new instances exclude each other on every key.
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.LockView;
 * import io.lockstep.recipes.spring.LockstepLockRegistry;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * CuratorFramework client = ...; // a started client
 * FencedStore store = ...; // your store: refuses stale tokens (docs/getting-started.md)
 * LockstepLockRegistry registry = new LockstepLockRegistry(client);
 * LockView lock = registry.obtain("orders/17");
 * lock.lock();
 * try {
 *   store.write("orders/17", "paid", lock.fencingToken());
 * } finally {
 *   lock.unlock();
 * }
 * }</pre>
 *
 * <p>Spring's {@code executeLocked(key, ...)} methods work as {@code LockRegistry} describes them:
 * they lock interruptibly (or within a budget, throwing {@link
 * java.util.concurrent.TimeoutException} when it runs out), run the task and unlock.
 *
 * <p><b>Failures.</b> As {@link LockView}'s: ZooKeeper failures beyond the client's retry policy
 * throw {@link io.lockstep.recipes.locks.LockException}; an acquire that times out or is
 * interrupted leaves no node behind; a hold whose session is lost is reported to the lock's state
 * listeners, and locking it again in the same thread throws {@link
 * io.lockstep.recipes.locks.LockOwnershipLostException} (an {@link IllegalMonitorStateException});
 * unlocking it then clears it without throwing. This is how Spring's {@code
 * LockRegistryLeaderInitiator}, which locks again at each heartbeat, gives up leadership when its
 * session expires (with Spring's own registry it does not notice). While ZooKeeper is unreachable,
 * {@code tryLock(time, unit)} returns {@code false} within its budget, an interrupt ends {@code
 * lockInterruptibly()}, and a hold whose session outlives the outage is still the thread's, as with
 * Spring's registry.
 *
 * <p><b>Where Spring's {@code ZookeeperLockRegistry} differs</b> (each case in the Spring page of
 * the documentation): {@link java.util.concurrent.locks.Lock#unlock()} by a thread that does not
 * hold the lock throws {@link IllegalMonitorStateException} itself, as {@code ReentrantLock} does,
 * where Spring's throws a {@code MessagingException} caused by Curator's; ZooKeeper failures throw
 * {@code LockException}, where Spring's throws {@code IllegalStateException} or {@code
 * MessagingException}; with ZooKeeper unreachable, {@code lockInterruptibly()} (so also {@code
 * executeLocked} without a budget) throws {@code LockException} once the client gives up, where
 * Spring's tries again every second until ZooKeeper is back or the thread is interrupted; {@code
 * tryLock()} makes one attempt, where Spring's waits up to a second; the cache counts an acquire
 * under way as use, and keeps its bound by passing over locks in use.
 *
 * <p><b>Limits.</b> The registry keeps the {@link #DEFAULT_CACHE_CAPACITY} (30,000, as Spring's)
 * most recently used locks and every lock in use; {@link #setCacheCapacity(int)} changes the bound,
 * {@link #expireUnusedOlderThan(long)} drops unused locks by age. A lock object a caller kept while
 * its key was dropped still works, and is cached again when it is locked; but if the key was
 * obtained again in between, the registry hands out another lock on the same path, which excludes
 * the kept one as a lock of another registry does (no reentrancy between the two): obtain a lock
 * right before locking it, as {@code executeLocked} does. To know whether a lock is in use, the
 * registry observes each of its locks ({@link LockObservers#of(
 * io.lockstep.recipes.locks.FencedLock)}); with an observer, a grant reaches the waiting thread
 * through one of Lockstep's threads, a hand-off of microseconds. A lock has no conditions. A
 * distributed lock is not a JVM mutex (see {@link io.lockstep.recipes.locks.FencedLock}): fence the
 * writes that matter with {@link LockView#fencingToken()}.
 */
public final class LockstepLockRegistry implements ExpirableLockRegistry<LockView> {
  /** The root of Spring's {@code ZookeeperLockRegistry} when none is given. */
  public static final String DEFAULT_ROOT = "/SpringIntegration-LockRegistry";

  /** The number of locks a registry keeps when {@link #setCacheCapacity(int)} was not called. */
  public static final int DEFAULT_CACHE_CAPACITY = 30_000;

  private final CuratorFramework client;
  private final String prefix; // the root, ending with '/'
  private final ReentrantLock cacheLock = new ReentrantLock(); // held for bookkeeping, never a wait

  /** The cached locks by key, least recently obtained (or locked) first. */
  @GuardedBy("cacheLock")
  private final LinkedHashMap<String, Entry> locks = new LinkedHashMap<>(16, 0.75f, true);

  /** How many locks {@link #locks} keeps beyond those in use; at least 1. */
  @GuardedBy("cacheLock")
  private int cacheCapacity = DEFAULT_CACHE_CAPACITY;

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
    final ReentrantMutex mutex;
    final LockView view;
    final Set<Long> active = ConcurrentHashMap.newKeySet(); // attempts under way and holds
    volatile long lastObtainedNanos; // written under cacheLock

    Entry(String key, ReentrantMutex mutex) {
      this.key = key;
      this.mutex = mutex;
      this.view = mutex.asLock();
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
   * Creates a registry under {@link #DEFAULT_ROOT}, Spring's default. Nothing is sent to ZooKeeper
   * until a lock is acquired.
   *
   * @param client a started Curator client; its retry policy, namespace and ACL provider apply
   * @throws NullPointerException if {@code client} is null
   */
  public LockstepLockRegistry(CuratorFramework client) {
    this(client, DEFAULT_ROOT);
  }

  /**
   * Creates a registry under {@code root}: a key's lock path is {@code root + "/" + key}, or {@code
   * root + key} if {@code root} ends with {@code '/'}, as for Spring's {@code
   * ZookeeperLockRegistry(client, root)}. Nothing is sent to ZooKeeper until a lock is acquired.
   *
   * @param client a started Curator client; its retry policy, namespace and ACL provider apply
   * @param root the path under which the keys' locks live, as given to Spring's registry
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code root} does not start a valid absolute ZooKeeper path
   */
  public LockstepLockRegistry(CuratorFramework client, String root) {
    this.client = Objects.requireNonNull(client, "client");
    Objects.requireNonNull(root, "root");
    this.prefix = root.endsWith("/") ? root : root + "/";
    try {
      PathUtils.validatePath(prefix + "key");
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "root is not the start of a valid ZooKeeper path: '" + root + "': " + e.getMessage(), e);
    }
  }

  /**
   * The lock of {@code key}: the same object while it is in use, and while it is cached (among the
   * {@link #setCacheCapacity(int) capacity} most recently obtained or locked, and not dropped by
   * {@link #expireUnusedOlderThan(long)}). Nothing is sent to ZooKeeper.
   *
   * @param key the lock key, a {@code String}
   * @return the key's lock
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalArgumentException if {@code key} is not a {@code String}, or does not make a
   *     valid ZooKeeper path (empty, ends with {@code '/'}, or contains {@code "//"}, a {@code "."}
   *     or {@code ".."} segment, or a character ZooKeeper refuses)
   */
  @Override
  public LockView obtain(Object key) {
    String name = keyOf(key);
    String path = pathOf(name);
    LockView cached = cached(name, null);
    return cached != null
        ? cached
        : cached(name, new Entry(name, new ReentrantMutex(client, path)));
  }

  /**
   * The view of the cached entry of {@code key}, now the most recently obtained; if there is none,
   * {@code made} is cached (evicting beyond capacity) and its view returned, or null if {@code
   * made} is null.
   */
  private LockView cached(String key, Entry made) {
    cacheLock.lock();
    try {
      Entry entry = locks.get(key);
      if (entry == null) {
        if (made == null) {
          return null;
        }
        entry = made;
        locks.put(key, entry);
        evictBeyondCapacity(entry);
      }
      entry.lastObtainedNanos = System.nanoTime();
      return entry.view;
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

  /**
   * Sets how many locks the registry keeps: beyond it, obtaining a lock not kept drops the least
   * recently obtained (or locked) lock that is not in use, as Spring's {@code
   * ZookeeperLockRegistry.setCacheCapacity} does. A lock in use (an acquire under way, or a hold,
   * also a lost one not yet unlocked) is never dropped, so while more locks than the capacity are
   * in use the registry keeps them all. A smaller capacity drops the surplus at once. A key
   * obtained again after its lock was dropped gets a new lock object.
   *
   * @param capacity how many locks to keep; {@link #DEFAULT_CACHE_CAPACITY} until set
   * @throws IllegalArgumentException if {@code capacity} is not positive
   */
  public void setCacheCapacity(int capacity) {
    if (capacity <= 0) {
      throw new IllegalArgumentException("capacity must be positive: " + capacity);
    }
    cacheLock.lock();
    try {
      cacheCapacity = capacity;
      evictBeyondCapacity(null);
    } finally {
      cacheLock.unlock();
    }
  }

  /**
   * The lock path of {@code key}: the root and the key, as Spring's {@code ZookeeperLockRegistry}
   * maps them (see the class comment).
   *
   * @param key the lock key, a {@code String}
   * @return the path
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalArgumentException if {@code key} is not a {@code String}, or does not make a
   *     valid ZooKeeper path
   */
  public String pathOf(Object key) {
    return pathOf(keyOf(key));
  }

  /**
   * Forgets the locks that are not in use (no acquire under way, no hold, also no lost hold not yet
   * unlocked) and were last obtained more than {@code age} milliseconds ago; a negative age, as
   * Spring's registries accept, forgets every lock not in use. A key obtained again later gets a
   * new lock object.
   *
   * @param age how long an unused lock is kept, in milliseconds
   */
  @Override
  public void expireUnusedOlderThan(long age) {
    long ageNanos = TimeUnit.MILLISECONDS.toNanos(age); // saturates at Long.MIN_VALUE / MAX_VALUE
    cacheLock.lock();
    try {
      long now = System.nanoTime();
      locks.values().removeIf(entry -> now - entry.lastObtainedNanos > ageNanos && !entry.inUse());
    } finally {
      cacheLock.unlock();
    }
  }

  /** The keys of the cached locks, least recently obtained (or locked) first; for tests. */
  List<String> cachedKeys() {
    cacheLock.lock();
    try {
      return new ArrayList<>(locks.keySet());
    } finally {
      cacheLock.unlock();
    }
  }

  /**
   * Forgets the locks that are not in use and were last obtained longer ago than {@code age}:
   * {@link #expireUnusedOlderThan(long)} with the age in milliseconds, a fraction of a millisecond
   * counting as a whole one. An age too long to count in milliseconds keeps every lock; a negative
   * age forgets every lock not in use, as the millisecond form does.
   *
   * @param age how long an unused lock is kept
   * @throws NullPointerException if {@code age} is null
   */
  public void expireUnusedOlderThan(Duration age) {
    Objects.requireNonNull(age, "age");
    long millis;
    try {
      millis = age.toMillis();
      if (!age.isNegative() && age.toNanosPart() % 1_000_000 != 0) {
        millis = Math.addExact(millis, 1);
      }
    } catch (ArithmeticException tooLong) {
      millis = age.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    expireUnusedOlderThan(millis);
  }

  private static String keyOf(Object key) {
    Objects.requireNonNull(key, "key");
    if (!(key instanceof String)) {
      throw new IllegalArgumentException(
          "key must be a String, as for Spring's ZookeeperLockRegistry, not a "
              + key.getClass().getName()
              + ": "
              + key);
    }
    return (String) key;
  }

  private String pathOf(String key) {
    String path = prefix + key;
    try {
      return PathUtils.validatePath(path);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "key '"
              + key
              + "' does not make a valid ZooKeeper path: '"
              + path
              + "': "
              + e.getMessage(),
          e);
    }
  }

  @Override
  public String toString() {
    return "LockstepLockRegistry[" + prefix + "]";
  }
}

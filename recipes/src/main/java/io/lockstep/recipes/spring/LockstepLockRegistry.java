package io.lockstep.recipes.spring;

import io.lockstep.recipes.locks.KeyLayout;
import io.lockstep.recipes.locks.KeyedLocks;
import io.lockstep.recipes.locks.LockObservers;
import io.lockstep.recipes.locks.MultiMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.integration.util.CheckedCallable;
import org.springframework.integration.util.CheckedRunnable;

/**
 * A Spring Integration lock registry on Lockstep: the drop-in replacement for Spring's {@code
 * ZookeeperLockRegistry}, handing out a {@link LockstepLock} (Spring's {@code DistributedLock} over
 * the {@link io.lockstep.recipes.locks.LockView} of a {@link ReentrantMutex}) per key, so the
 * fencing token of the caller's hold is within reach, and a hold can have a time to live that fails
 * safe.
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
 * import io.lockstep.recipes.spring.LockstepLock;
 * import io.lockstep.recipes.spring.LockstepLockRegistry;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * CuratorFramework client = ...; // a started client
 * FencedStore store = ...; // your store: refuses stale tokens (docs/getting-started.md)
 * LockstepLockRegistry registry = new LockstepLockRegistry(client);
 * LockstepLock lock = registry.obtain("orders/17");
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
 * java.util.concurrent.TimeoutException} when it runs out), run the task and unlock. A task's own
 * exception reaches the caller even when the unlock fails too (its time to live ran out): the
 * unlock's {@code ConcurrentModificationException} is added to it as suppressed.
 *
 * <p><b>Time to live and renewal.</b> {@link LockstepLock#lock(java.time.Duration)} and {@link
 * LockstepLock#tryLock(java.time.Duration, java.time.Duration)} take a hold that is lost, and its
 * node deleted, when it outlives its time to live; {@link #renewLock(Object, java.time.Duration)}
 * moves the deadline of the calling thread's hold. Holds taken without one get the {@link
 * #setDefaultTtl(java.time.Duration) default}, none unless set. See {@link LockstepLock}.
 *
 * <p><b>Failures.</b> As {@link io.lockstep.recipes.locks.LockView}'s: ZooKeeper failures beyond
 * the client's retry policy throw {@link io.lockstep.recipes.locks.LockException}; an acquire that
 * times out or is interrupted leaves no node behind; a hold whose session is lost is reported to
 * the lock's state listeners, and locking it again in the same thread throws {@link
 * io.lockstep.recipes.locks.LockOwnershipLostException} (an {@link IllegalMonitorStateException});
 * unlocking it then clears it without throwing. This is how Spring's {@code
 * LockRegistryLeaderInitiator}, which locks again at each heartbeat, gives up leadership when its
 * session expires (with Spring's own registry it does not notice). While ZooKeeper is unreachable,
 * {@code tryLock(time, unit)} returns {@code false} within its budget, an interrupt ends {@code
 * lockInterruptibly()}, and a hold whose session outlives the outage is still the thread's, as with
 * Spring's registry.
 *
 * <p><b>Where Spring's {@code ZookeeperLockRegistry} differs</b> (each case in the Spring page of
 * the documentation): the exceptions of an unlock without a hold ({@link
 * IllegalMonitorStateException} itself) and of ZooKeeper failures ({@code LockException}); {@code
 * lockInterruptibly()} with ZooKeeper unreachable (it gives up with the client); {@code tryLock()}
 * (one attempt); and the cache, which counts an acquire under way as use.
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
 * writes that matter with {@link LockstepLock#fencingToken()}.
 */
public final class LockstepLockRegistry
    implements ExpirableLockRegistry<LockstepLock>, RenewableLockRegistry<LockstepLock> {
  /** The root of Spring's {@code ZookeeperLockRegistry} when none is given. */
  public static final String DEFAULT_ROOT = "/SpringIntegration-LockRegistry";

  /** The number of locks a registry keeps when {@link #setCacheCapacity(int)} was not called. */
  public static final int DEFAULT_CACHE_CAPACITY = 30_000;

  /**
   * Starts and separates the paths in a several keys' cache key; no path has it, but a key may (a
   * layout encodes it): such a key is cached as "\0\0" and the key, which no several keys' lock is.
   */
  private static final String MULTI = "\u0000";

  private final CuratorFramework client;
  private final RegistryPaths paths;
  private final LockCache cache = new LockCache(this::defaultTtl);
  private volatile Duration defaultTtl; // null: holds without a time to live last until unlocked

  /**
   * Creates a registry under {@link #DEFAULT_ROOT}, Spring's default. Nothing is sent to ZooKeeper
   * until a lock is acquired.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
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
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param root the path under which the keys' locks live, as given to Spring's registry
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code root} does not start a valid absolute ZooKeeper path
   */
  public LockstepLockRegistry(CuratorFramework client, String root) {
    this.client = Objects.requireNonNull(client, "client");
    this.paths = new RegistryPaths(root);
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
  public LockstepLock obtain(Object key) {
    String name = RegistryPaths.keyOf(key);
    String path = paths.pathOf(name);
    String cacheKey = name.startsWith(MULTI) ? MULTI + name : name;
    LockstepLock cached = cache.cached(cacheKey, null);
    return cached != null ? cached : cache.cached(cacheKey, new ReentrantMutex(client, path));
  }

  /**
   * The lock of several keys at once: held when all of them are, taken and given back atomically,
   * as one {@link io.lockstep.recipes.locks.MultiMutex} on the keys' paths (one ZooKeeper
   * transaction enqueues on every path, so it cannot deadlock with another lock of the registry,
   * whatever order callers name the keys in). Each key's queue is the one {@link #obtain(Object)}
   * locks: it excludes, and is excluded by, the single-key lock of each of its keys, in this and in
   * every other process. The fencing token is the multi-lock's, greater than every token handed out
   * on any of its paths before. The same lock object comes back for the same set of keys (in any
   * order) while it is in use or cached, as for one key, and it counts against the same capacity.
   * One key gives {@link #obtain(Object) that key's lock}. Nothing is sent to ZooKeeper.
   *
   * <pre>{@code
   * import io.lockstep.recipes.spring.LockstepLock;
   * import io.lockstep.recipes.spring.LockstepLockRegistry;
   * import java.util.List;
   *
   * LockstepLockRegistry registry = ...; // the service's registry
   * LockstepLock both = registry.obtainAll(List.of("accounts/17", "accounts/4"));
   * both.lock();
   * try {
   *   // both accounts are ours
   * } finally {
   *   both.unlock();
   * }
   * }</pre>
   *
   * <p>A thread that holds one lock and then locks another steps outside the guarantee (see {@link
   * io.lockstep.recipes.locks.MultiMutex}): ask for every key it needs in one call instead.
   *
   * @param keys the lock keys, {@code String}s, in any order
   * @return the lock of all of them
   * @throws NullPointerException if {@code keys} or one of them is null
   * @throws IllegalArgumentException if {@code keys} is empty, names a key twice, holds a key that
   *     is not a {@code String} or makes no valid path, or two keys whose paths lie one inside the
   *     other ({@code "a"} and {@code "a/b"}), or too many for one ZooKeeper transaction
   */
  public LockstepLock obtainAll(Collection<?> keys) {
    TreeMap<String, String> pathsByKey = paths.pathsByKey(keys);
    if (pathsByKey.size() == 1) {
      return obtain(pathsByKey.firstKey());
    }
    List<String> paths = List.copyOf(pathsByKey.values());
    String cacheKey = MULTI + String.join(MULTI, paths);
    LockstepLock cached = cache.cached(cacheKey, null);
    if (cached != null) {
      return cached;
    }
    MultiMutex made;
    try {
      made = new MultiMutex(client, paths);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("keys " + keys + ": " + e.getMessage(), e);
    }
    return cache.cached(cacheKey, made);
  }

  @Override
  public <E extends Throwable> void executeLocked(Object lockKey, CheckedRunnable<E> runnable)
      throws E, InterruptedException {
    LockedTasks.call(obtain(lockKey), LockedTasks.callable(runnable));
  }

  @Override
  public <T, E extends Throwable> T executeLocked(Object lockKey, CheckedCallable<T, E> callable)
      throws E, InterruptedException {
    return LockedTasks.call(obtain(lockKey), callable);
  }

  @Override
  public <E extends Throwable> void executeLocked(
      Object lockKey, Duration waitLockDuration, CheckedRunnable<E> runnable)
      throws E, InterruptedException, TimeoutException {
    LockedTasks.call(obtain(lockKey), lockKey, waitLockDuration, LockedTasks.callable(runnable));
  }

  @Override
  public <T, E extends Throwable> T executeLocked(
      Object lockKey, Duration waitLockDuration, CheckedCallable<T, E> callable)
      throws E, InterruptedException, TimeoutException {
    return LockedTasks.call(obtain(lockKey), lockKey, waitLockDuration, callable);
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
    cache.setCapacity(capacity);
  }

  /**
   * Spreads the keys' locks over hashed directories, as {@link KeyedLocks} does with {@code
   * layout}: a key's lock path becomes {@code layout.pathOf(root, key)}, with the key written as
   * one percent-encoded node name, so that no directory under the root grows with the number of
   * keys. Without it (the default) a key's lock is {@code root + "/" + key}, Spring's mapping: keep
   * that while any process still runs Spring's {@code ZookeeperLockRegistry} on the same root,
   * since two mappings put the same key's lock in two places. Set it before the first lock is
   * obtained.
   *
   * @param layout the key layout, for instance {@code KeyLayout.hashed(2)}
   * @throws NullPointerException if {@code layout} is null
   * @throws IllegalStateException if a lock was obtained already
   */
  public void setKeyLayout(KeyLayout layout) {
    Objects.requireNonNull(layout, "layout");
    if (!cache.keys().isEmpty()) {
      throw new IllegalStateException(
          "set the key layout before the first lock is obtained: " + cache.keys().size() + " kept");
    }
    paths.setLayout(layout);
  }

  /**
   * The lock path of {@code key}: the root and the key, as Spring's {@code ZookeeperLockRegistry}
   * maps them (see the class comment), or as the layout given to {@link #setKeyLayout} maps them.
   *
   * @param key the lock key, a {@code String}
   * @return the path
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalArgumentException if {@code key} is not a {@code String}, or does not make a
   *     valid ZooKeeper path
   */
  public String pathOf(Object key) {
    return paths.pathOf(RegistryPaths.keyOf(key));
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
    cache.expireUnusedOlderThan(TimeUnit.MILLISECONDS.toNanos(age)); // saturates
  }

  /** The keys of the cached locks, least recently obtained (or locked) first; for tests. */
  List<String> cachedKeys() {
    return cache.keys();
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
    expireUnusedOlderThan(LockCache.ageMillis(Objects.requireNonNull(age, "age")));
  }

  /**
   * Sets the time to live of the holds taken without one ({@link LockstepLock#lock()}, {@code
   * tryLock(...)} and {@code lockInterruptibly()}, so also {@code executeLocked}), and of {@link
   * #renewLock(Object)} for a hold that has none. Until set, or set to null, such holds last until
   * unlocked or lost with their session, unlike Spring's JDBC (10 s) and Redis (60 s) registries,
   * whose locks always expire. Holds taken before the call keep their time to live.
   *
   * @param ttl the default time to live, positive; or null for none
   * @throws IllegalArgumentException if {@code ttl} is not positive
   */
  public void setDefaultTtl(Duration ttl) {
    this.defaultTtl = ttl == null ? null : LockstepLock.checkTtl(ttl);
  }

  /**
   * The time to live of holds taken without one.
   *
   * @return the default time to live, or null if holds taken without one never expire
   */
  public Duration defaultTtl() {
    return defaultTtl;
  }

  /**
   * Renews the calling thread's hold of {@code lockKey} for its time to live from now: the one it
   * was taken or last renewed with (the {@link #setDefaultTtl(Duration) default} for a hold taken
   * without one). A hold without a time to live keeps none.
   *
   * @param lockKey the lock key, a {@code String}
   * @throws IllegalMonitorStateException if the calling thread does not hold the key's lock
   * @throws IllegalStateException if the hold was lost, or its time to live ran out
   * @throws IllegalArgumentException if {@code lockKey} is not a valid key (see {@link
   *     #obtain(Object)})
   */
  @Override
  public void renewLock(Object lockKey) {
    obtain(lockKey).renew(null, lockKey);
  }

  /**
   * Renews the calling thread's hold of {@code lockKey} for {@code ttl} from now; a hold without a
   * time to live gets this one. Nothing is sent to ZooKeeper: the deadline is kept here, and the
   * node lasts until the hold ends.
   *
   * @param lockKey the lock key, a {@code String}
   * @param ttl the new time to live, positive
   * @throws IllegalMonitorStateException if the calling thread does not hold the key's lock
   * @throws IllegalStateException if the hold was lost, or its time to live ran out
   * @throws IllegalArgumentException if {@code ttl} is not positive, or {@code lockKey} is not a
   *     valid key
   * @throws NullPointerException if an argument is null
   */
  @Override
  public void renewLock(Object lockKey, Duration ttl) {
    Duration checked = LockstepLock.checkTtl(ttl);
    obtain(lockKey).renew(checked, lockKey);
  }

  @Override
  public String toString() {
    return "LockstepLockRegistry[" + paths.prefix() + "]";
  }
}

package io.lockstep.recipes.spring;

import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockAttempt;
import io.lockstep.recipes.locks.LockObserver;
import io.lockstep.recipes.locks.LockObservers;
import io.lockstep.recipes.locks.LockView;
import io.lockstep.recipes.locks.ReentrantMutex;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.PathUtils;
import org.springframework.integration.support.locks.ExpirableLockRegistry;

/**
 * A Spring Integration lock registry on Lockstep: the drop-in replacement for Spring's {@code
 * ZookeeperLockRegistry}, handing out the {@link LockView} of a {@link ReentrantMutex} per key, so
 * the fencing token of the caller's hold is within reach.
 *
 * <p><b>Held and owned.</b> {@link #obtain(Object)} returns the same lock object for the same key
 * while it is in use (an acquire under way, or a hold) or was obtained within the age given to
 * {@link #expireUnusedOlderThan(long)}. Each lock is a {@link ReentrantMutex} seen as a {@link
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
 * session expires (with Spring's own registry it does not notice).
 *
 * <p><b>Limits.</b> Every key obtained stays in memory until {@link #expireUnusedOlderThan(long)}
 * drops it; call it from time to time in a service with many keys. To know whether a lock is in
 * use, the registry observes each of its locks ({@link LockObservers#of(
 * io.lockstep.recipes.locks.FencedLock)}); with an observer, a grant reaches the waiting thread
 * through one of Lockstep's threads, a hand-off of microseconds. A lock has no conditions. A
 * distributed lock is not a JVM mutex (see {@link io.lockstep.recipes.locks.FencedLock}): fence the
 * writes that matter with {@link LockView#fencingToken()}.
 */
public final class LockstepLockRegistry implements ExpirableLockRegistry<LockView> {
  /** The root of Spring's {@code ZookeeperLockRegistry} when none is given. */
  public static final String DEFAULT_ROOT = "/SpringIntegration-LockRegistry";

  private final CuratorFramework client;
  private final String prefix; // the root, ending with '/'
  private final ConcurrentMap<String, Entry> locks = new ConcurrentHashMap<>();

  /* Algorithm notes:
   *
   * An entry is in use while an attempt of its mutex is under way or a hold of it is not released.
   * A per-lock observer keeps the ids of those attempts: attemptStarted (in the acquiring thread,
   * before the attempt sends anything) adds one; attemptEnded without a grant, and released, remove
   * it. The engine tells one attempt's callbacks in order, so the set is never short of an attempt
   * in progress; a lost hold stays until its thread unlocks it. obtain and expiry run in the map's
   * compute for the key, so an entry is never dropped between being handed out and its timestamp
   * being refreshed.
   */

  /** The lock of one key, the attempts and holds under way on it, and when it was last obtained. */
  private static final class Entry implements LockObserver {
    final ReentrantMutex mutex;
    final LockView view;
    final Set<Long> active = ConcurrentHashMap.newKeySet(); // attempts under way and holds
    volatile long lastObtainedNanos; // written in the map's compute for the key

    Entry(ReentrantMutex mutex) {
      this.mutex = mutex;
      this.view = mutex.asLock();
      LockObservers.of(mutex).addListener(this);
    }

    @Override
    public void attemptStarted(LockAttempt attempt) {
      active.add(attempt.id());
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
   * The lock of {@code key}: the same object while it is in use or was obtained within the age
   * given to {@link #expireUnusedOlderThan(long)}. Nothing is sent to ZooKeeper.
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
    Entry entry =
        locks.compute(
            name,
            (k, existing) -> {
              Entry current =
                  existing == null ? new Entry(new ReentrantMutex(client, path)) : existing;
              current.lastObtainedNanos = System.nanoTime();
              return current;
            });
    return entry.view;
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
   * unlocked) and were last obtained more than {@code age} milliseconds ago. A key obtained again
   * later gets a new lock object.
   *
   * @param age how long an unused lock is kept, in milliseconds
   * @throws IllegalArgumentException if {@code age} is negative
   */
  @Override
  public void expireUnusedOlderThan(long age) {
    if (age < 0) {
      throw new IllegalArgumentException("age must not be negative: " + age + " ms");
    }
    long ageNanos = TimeUnit.MILLISECONDS.toNanos(age);
    long now = System.nanoTime();
    for (String key : locks.keySet()) {
      locks.computeIfPresent(
          key,
          (k, entry) -> now - entry.lastObtainedNanos > ageNanos && !entry.inUse() ? null : entry);
    }
  }

  /**
   * Forgets the locks that are not in use and were last obtained longer ago than {@code age}:
   * {@link #expireUnusedOlderThan(long)} with the age in milliseconds, a fraction of a millisecond
   * counting as a whole one. An age too long to count in milliseconds keeps every lock.
   *
   * @param age how long an unused lock is kept
   * @throws NullPointerException if {@code age} is null
   * @throws IllegalArgumentException if {@code age} is negative
   */
  public void expireUnusedOlderThan(Duration age) {
    Objects.requireNonNull(age, "age");
    if (age.isNegative()) {
      throw new IllegalArgumentException("age must not be negative: " + age);
    }
    long millis;
    try {
      millis = Math.addExact(age.toMillis(), age.toNanosPart() % 1_000_000 == 0 ? 0 : 1);
    } catch (ArithmeticException tooLong) {
      millis = Long.MAX_VALUE;
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

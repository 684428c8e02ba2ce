package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.LockEngine;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;

/**
 * Locks by business key: one lock per key, under one root path, for services that lock an order, an
 * account or a tenant rather than a fixed path.
 *
 * <p><b>Held and owned.</b> {@link #mutex(String)} and {@link #readWrite(String)} return the same
 * lock object for the same key while it is in use (waiting or holding) or was asked for within the
 * age given to {@link #expireUnusedOlderThan(Duration)}, so that reentrancy and the thread
 * ownership of the recipes work across callers. Each lock behaves as the recipe does.
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.KeyedLocks;
 * import io.lockstep.recipes.locks.LockHold;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * CuratorFramework client = ...; // a started client
 * FencedStore store = ...; // your store: refuses stale tokens (docs/getting-started.md)
 * String orderId = ...; // the order the request is about
 * KeyedLocks orders = new KeyedLocks(client, "/locks/orders");
 * try (LockHold hold = orders.mutex(orderId).hold()) {
 *   store.write(orderId, "shipped", hold.fencingToken());
 * }
 * }</pre>
 *
 * <p><b>Keys and paths.</b> Any non-empty string is a key. It becomes one node name ({@link
 * #pathOf(String)}): ASCII letters, digits, {@code '-'}, {@code '_'} and {@code '.'} stay as they
 * are; every other character is written as the percent-encoded bytes of its UTF-8 form ({@code
 * "a/b"} becomes {@code "a%2Fb"}, {@code "é"} becomes {@code "%C3%A9"}), and a surrogate that is
 * not half of a pair as {@code %u} and its four hex digits; a key of only dots is encoded whole. So
 * no key can reach outside the root, every string has a node of its own, and {@link #keyOf(String)}
 * gives a path's key back. A key whose node name would be longer than 1,024 characters is refused.
 * Use one kind of lock per key: a mutex and a read-write lock on one key would share one queue that
 * neither understands.
 *
 * <p><b>Layout.</b> By default the node lies right under the root ({@link KeyLayout#flat()}), so
 * the root holds a directory per key. For many keys, {@link KeyLayout#hashed(int)} puts it under
 * hashed directories ({@code <root>/72/a9/order-17}): the root and each hashed directory above the
 * last level hold at most 256 children, and the keys spread evenly over the last level. Every
 * directory is a container node, made together with the node below it, which the server reaps once
 * its keys are unlocked; every process locking these keys must use the same layout.
 *
 * <p><b>Memory.</b> A key's lock object stays in memory until {@link
 * #expireUnusedOlderThan(Duration)} drops it; a lock that is held or waited for is never dropped.
 * Each idle key costs the lock object and its map entry (docs/services.md gives the measured size):
 * call {@code expireUnusedOlderThan} from a scheduled task of a service with many keys.
 */
public final class KeyedLocks implements AutoCloseable {
  /** The longest node name a key may become. */
  private static final int MAX_NAME_LENGTH = 1_024;

  private final CuratorFramework client;
  private final LongSupplier clock; // the client's engine's: when keys were last asked for
  private final String root;
  private final KeyLayout layout;
  private final ConcurrentMap<String, Entry> locks = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** A lock of one key, and when it was last asked for. */
  private static final class Entry {
    final Object lock; // a ReentrantMutex or a ReadWriteMutex
    volatile long lastAskedNanos;

    Entry(Object lock) {
      this.lock = lock;
    }
  }

  /**
   * Creates the locks of {@code root} in the {@link KeyLayout#flat() flat} layout, one directory
   * per key right under the root. Nothing is sent to ZooKeeper until a lock is acquired.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param root the path under which every key's lock lives; not {@code "/"}
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code root} is not a valid ZooKeeper path, or is {@code
   *     "/"}
   */
  public KeyedLocks(CuratorFramework client, String root) {
    this(client, root, KeyLayout.flat());
  }

  /**
   * Creates the locks of {@code root} in {@code layout}: {@link KeyLayout#hashed(int)} for a
   * service with many keys, so that no directory holds more than a bounded number of children.
   * Nothing is sent to ZooKeeper until a lock is acquired.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param root the path under which every key's lock lives; not {@code "/"}
   * @param layout where a key's lock lives under the root; every process locking these keys must
   *     use the same
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code root} is not a valid ZooKeeper path, or is {@code
   *     "/"}
   */
  public KeyedLocks(CuratorFramework client, String root, KeyLayout layout) {
    this.client = Arguments.client(client);
    this.root = checkRoot(root);
    this.layout = Objects.requireNonNull(layout, "layout");
    this.clock = LockEngine.of(client)::now;
  }

  /**
   * Starts building the locks of {@code root}, the shape every recipe shares; the {@link
   * KeyLayout#flat() flat} layout unless {@link Builder#layout(KeyLayout)} says otherwise.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param root the path under which every key's lock lives; not {@code "/"}
   * @return a new builder
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code root} is not a valid ZooKeeper path, or is {@code
   *     "/"}
   */
  public static Builder builder(CuratorFramework client, String root) {
    return new Builder(Arguments.client(client), checkRoot(root));
  }

  /** The options of {@link KeyedLocks}: its layout. Not thread-safe; {@link #build()} makes it. */
  public static final class Builder extends RecipeBuilder {
    private KeyLayout layout = KeyLayout.flat();

    private Builder(CuratorFramework client, String root) {
      super(client, root);
    }

    /**
     * Where a key's lock lives under the root: {@link KeyLayout#hashed(int)} for a service with
     * many keys. Every process locking these keys must use the same.
     *
     * @param layout the layout
     * @return this builder
     * @throws NullPointerException if {@code layout} is null
     */
    public Builder layout(KeyLayout layout) {
      this.layout = Objects.requireNonNull(layout, "layout");
      return this;
    }

    /**
     * Makes the locks. Nothing is sent to ZooKeeper until a lock is acquired.
     *
     * @return a new object
     */
    public KeyedLocks build() {
      return new KeyedLocks(client, path, layout);
    }
  }

  private static String checkRoot(String root) {
    Arguments.path(root, "root");
    if (root.equals("/")) {
      throw new IllegalArgumentException(
          "root must not be \"/\": give the locks a path of their own");
    }
    return root;
  }

  /**
   * Closes this object and every lock object it made: no key gets a lock object from now on ({@link
   * #mutex} and {@link #readWrite} throw {@link IllegalStateException}), and the lock objects
   * handed out are closed (see {@link ReentrantMutex#close()}: they start no new hold, their
   * acquires under way are withdrawn, their holds are not touched). Idempotent.
   */
  @Override
  public void close() {
    closed = true;
    for (String key : locks.keySet()) {
      Entry entry = locks.remove(key);
      if (entry != null) {
        if (entry.lock instanceof ReadWriteMutex readWrite) {
          readWrite.close();
        } else {
          ((ReentrantMutex) entry.lock).close();
        }
      }
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException(this + " is closed");
    }
  }

  /**
   * The reentrant mutex of {@code key}: the same object while it is in use.
   *
   * @param key any non-empty string
   * @return the key's lock
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalArgumentException if {@code key} is empty or too long
   * @throws IllegalStateException if {@code key} is in use as a read-write lock here, or this
   *     object was closed
   */
  public ReentrantMutex mutex(String key) {
    return lockOf(key, ReentrantMutex.class, path -> new ReentrantMutex(client, path));
  }

  /**
   * The read-write lock of {@code key}: the same object while it is in use.
   *
   * @param key any non-empty string
   * @return the key's lock
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalArgumentException if {@code key} is empty or too long
   * @throws IllegalStateException if {@code key} is in use as a mutex here, or this object was
   *     closed
   */
  public ReadWriteMutex readWrite(String key) {
    return lockOf(key, ReadWriteMutex.class, path -> new ReadWriteMutex(client, path));
  }

  /**
   * The lock path of {@code key}: the root, the layout's directories if any, and the key's node
   * name (see the class comment and {@link KeyLayout}).
   *
   * @param key any non-empty string
   * @return the path
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalArgumentException if {@code key} is empty or too long
   */
  public String pathOf(String key) {
    return layout.pathOf(root, key);
  }

  /**
   * The key whose lock path is {@code path}: the inverse of {@link #pathOf(String)}, for tools that
   * list the locks under the root.
   *
   * @param path a key's lock path under the root in this layout
   * @return the key
   * @throws NullPointerException if {@code path} is null
   * @throws IllegalArgumentException if {@code path} is not a key's lock path under the root in
   *     this layout
   */
  public String keyOf(String path) {
    return layout.keyOf(root, path);
  }

  /**
   * Where the keys' locks live under the root.
   *
   * @return the layout given at construction, {@link KeyLayout#flat()} by default
   */
  public KeyLayout layout() {
    return layout;
  }

  /**
   * Forgets the lock objects that are not in use (no acquire waiting, no hold) and were last asked
   * for longer ago than {@code age}. A key asked for again later gets a new lock object.
   *
   * @param age how long an unused lock is kept
   * @throws NullPointerException if {@code age} is null
   * @throws IllegalArgumentException if {@code age} is negative
   */
  public void expireUnusedOlderThan(Duration age) {
    long ageNanos = Arguments.timeoutNanos(age, "age");
    long now = clock.getAsLong();
    for (String key : locks.keySet()) {
      locks.computeIfPresent(
          key,
          (k, entry) -> now - entry.lastAskedNanos >= ageNanos && !inUse(entry) ? null : entry);
    }
  }

  /** How many keys have a lock object right now. */
  int size() {
    return locks.size();
  }

  private <L> L lockOf(String key, Class<L> kind, Function<String, L> create) {
    checkOpen();
    String path = pathOf(key);
    Entry entry =
        locks.compute(
            key,
            (k, existing) -> {
              Entry current = existing == null ? new Entry(create.apply(path)) : existing;
              current.lastAskedNanos = clock.getAsLong();
              return current;
            });
    if (closed) {
      close(); // closed while this key's lock was made: it goes too
      checkOpen();
    }
    if (!kind.isInstance(entry.lock)) {
      throw new IllegalStateException(
          "key '" + key + "' is in use as a " + entry.lock.getClass().getSimpleName() + " here");
    }
    return kind.cast(entry.lock);
  }

  private static boolean inUse(Entry entry) {
    if (entry.lock instanceof ReadWriteMutex) {
      ReadWriteMutex readWrite = (ReadWriteMutex) entry.lock;
      return inUse(readWrite.readLock()) || inUse(readWrite.writeLock());
    }
    return inUse((AbstractFencedLock) entry.lock);
  }

  private static boolean inUse(AbstractFencedLock lock) {
    return lock.holds.settings().inUse();
  }

  /** The key's node name (see {@link KeyNames}), refused when too long. */
  static String nodeName(String key) {
    String name = KeyNames.encode(key);
    if (name.length() > MAX_NAME_LENGTH) {
      throw new IllegalArgumentException(
          "key is too long: its node name would be "
              + name.length()
              + " characters, more than "
              + MAX_NAME_LENGTH);
    }
    return name;
  }

  @Override
  public String toString() {
    return "KeyedLocks[" + root + ", " + layout + "]";
  }
}

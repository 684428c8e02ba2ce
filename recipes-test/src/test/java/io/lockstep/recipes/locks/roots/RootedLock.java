package io.lockstep.recipes.locks.roots;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.KeyLayout;
import io.lockstep.recipes.locks.KeyedLocks;
import io.lockstep.recipes.locks.MultiMutex;
import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;

/**
 * Every exclusive lock the client-root tests run over, named by one path {@code name} whose
 * directory and parents need not exist: the lock object, the lock a second client contends with (a
 * writer for a read lock), and the lock paths whose children are its nodes.
 */
enum RootedLock {
  REENTRANT_MUTEX(ReentrantMutex::new, name -> List.of(name)),
  REENTRANT_MUTEX_LOCAL_HANDOFF(
      (client, name) -> ReentrantMutex.builder(client, name).localHandoff(2).build(),
      name -> List.of(name)),
  NON_REENTRANT_MUTEX(NonReentrantMutex::new, name -> List.of(name)),
  READ_LOCK(
      (client, name) -> new ReadWriteMutex(client, name).readLock(),
      (client, name) -> new ReadWriteMutex(client, name).writeLock(),
      name -> List.of(name)),
  WRITE_LOCK((client, name) -> new ReadWriteMutex(client, name).writeLock(), name -> List.of(name)),
  /** Readers of one client sharing one read node (read sharing). */
  READ_LOCK_SHARED(
      (client, name) -> ReadWriteMutex.builder(client, name).localHandoff(2).build().readLock(),
      (client, name) -> new ReadWriteMutex(client, name).writeLock(),
      name -> List.of(name)),
  WRITE_LOCK_LOCAL_HANDOFF(
      (client, name) -> ReadWriteMutex.builder(client, name).localHandoff(2).build().writeLock(),
      name -> List.of(name)),
  /** A mutex and a write lock, on paths whose directories and parents differ. */
  MULTI_MUTEX(
      (client, name) ->
          MultiMutex.builder(client).mutex(name + "/a/x").write(name + "/b/y/z").build(),
      name -> List.of(name + "/a/x", name + "/b/y/z")),
  KEYED_FLAT(
      (client, name) -> new KeyedLocks(client, name, KeyLayout.flat()).mutex("order-17"),
      name -> List.of(KeyLayout.flat().pathOf(name, "order-17"))),
  KEYED_HASHED(
      (client, name) -> new KeyedLocks(client, name, KeyLayout.hashed(2)).mutex("order-17"),
      name -> List.of(KeyLayout.hashed(2).pathOf(name, "order-17"))),
  SPRING_REGISTRY(
      (client, name) ->
          new LockstepLockRegistry(client, name).obtain("tenant-7/orders").fencedLock(),
      name -> List.of(name + "/tenant-7/orders")),
  SPRING_REGISTRY_HASHED(
      (client, name) -> {
        LockstepLockRegistry registry = new LockstepLockRegistry(client, name);
        registry.setKeyLayout(KeyLayout.hashed(1));
        return registry.obtain("tenant-7/orders").fencedLock();
      },
      name -> List.of(KeyLayout.hashed(1).pathOf(name, "tenant-7/orders")));

  @SuppressWarnings("ImmutableEnumChecker") // stateless lambdas
  private final BiFunction<CuratorFramework, String, FencedLock> lock;

  @SuppressWarnings("ImmutableEnumChecker")
  private final BiFunction<CuratorFramework, String, FencedLock> contender;

  @SuppressWarnings("ImmutableEnumChecker")
  private final Function<String, List<String>> lockPaths;

  RootedLock(
      BiFunction<CuratorFramework, String, FencedLock> lock,
      Function<String, List<String>> lockPaths) {
    this(lock, lock, lockPaths);
  }

  RootedLock(
      BiFunction<CuratorFramework, String, FencedLock> lock,
      BiFunction<CuratorFramework, String, FencedLock> contender,
      Function<String, List<String>> lockPaths) {
    this.lock = lock;
    this.contender = contender;
    this.lockPaths = lockPaths;
  }

  /** A new lock object named {@code name}; nothing is sent until it is acquired. */
  FencedLock lock(CuratorFramework client, String name) {
    return lock.apply(client, name);
  }

  /** A lock that excludes {@link #lock}'s holder: the same kind, or a writer for a read lock. */
  FencedLock contender(CuratorFramework client, String name) {
    return contender.apply(client, name);
  }

  /** The client's paths whose children are the lock's nodes, one per node. */
  List<String> lockPaths(String name) {
    return lockPaths.apply(name);
  }

  /** Whether a holder notices that its node was deleted (a multi-lock notices only expiry). */
  boolean detectsNodeDeletion() {
    return this != MULTI_MUTEX;
  }
}

package io.lockstep.testing;

import io.lockstep.recipes.locks.FencedLock;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.utils.ZKPaths;

/**
 * The catalogue of lock recipes, as both {@link Library libraries} implement them: which class to
 * build, which paths a lock named {@code path} takes and how, and which directories its nodes go
 * in. Benchmarks, the demo, the chaos run and the contract tests all build their locks here.
 *
 * <p>A lock is named by one path. A single-path recipe locks that path; a multi-lock on K paths
 * locks the siblings {@code path-a}, {@code path-b}, ... ({@link #lockPaths(String, int)}).
 */
public enum Recipe {
  /** {@code InterProcessMutex} against {@code ReentrantMutex}. */
  MUTEX("mutex", "InterProcessMutex", "ReentrantMutex"),
  /** {@code InterProcessSemaphoreMutex} against {@code NonReentrantMutex}. */
  NON_REENTRANT_MUTEX("non-reentrant mutex", "InterProcessSemaphoreMutex", "NonReentrantMutex"),
  /** The read side of {@code InterProcessReadWriteLock} against that of {@code ReadWriteMutex}. */
  READ("read lock", "InterProcessReadWriteLock.readLock()", "ReadWriteMutex.readLock()"),
  /** The write side of {@code InterProcessReadWriteLock} against that of {@code ReadWriteMutex}. */
  WRITE("write lock", "InterProcessReadWriteLock.writeLock()", "ReadWriteMutex.writeLock()"),
  /** {@code InterProcessMultiLock} over mutexes against {@code MultiMutex}, on K paths. */
  MULTI("multi-lock", "InterProcessMultiLock", "MultiMutex"),
  /**
   * A multi-lock whose paths alternate between the write side of a read-write lock and a mutex
   * ({@code MultiMutex.builder(client).write(a).mutex(b)...}), on K paths.
   */
  MULTI_MIXED("mixed-mode multi-lock", "InterProcessMultiLock", "MultiMutex");

  private static final int MAX_PATHS = 26;

  private final String label;
  private final String curatorClass;
  private final String lockstepClass;

  Recipe(String label, String curatorClass, String lockstepClass) {
    this.label = label;
    this.curatorClass = curatorClass;
    this.lockstepClass = lockstepClass;
  }

  /** A short name for tables: "mutex", "multi-lock, K = 8". */
  public String label(int paths) {
    return isMulti() ? label + ", K = " + paths : label;
  }

  /** The class (or method) that implements this recipe in {@code library}. */
  public String className(Library library) {
    return library == Library.CURATOR ? curatorClass : lockstepClass;
  }

  /** Whether a lock of this recipe takes several paths at once. */
  public boolean isMulti() {
    return this == MULTI || this == MULTI_MIXED;
  }

  /** Whether Lockstep's lock gives its holds to threads (reentrant) rather than to the object. */
  public boolean isThreadBound() {
    return this != NON_REENTRANT_MUTEX;
  }

  /**
   * Whether Lockstep's holder notices that a third party deleted its node: single-path locks do, a
   * multi-lock notices only the loss of its session.
   */
  public boolean detectsNodeDeletion() {
    return !isMulti();
  }

  /**
   * The paths, with their modes, that a lock of this recipe named {@code path} takes.
   *
   * @param paths K for a multi-lock (at most 26); ignored by single-path recipes
   */
  public List<LockPart> parts(String path, int paths) {
    if (!isMulti()) {
      return List.of(new LockPart(this, path));
    }
    List<String> lockPaths = lockPaths(path, paths);
    List<LockPart> parts = new ArrayList<>(lockPaths.size());
    for (int i = 0; i < lockPaths.size(); i++) {
      boolean write = this == MULTI_MIXED && i % 2 == 0;
      parts.add(write ? LockPart.write(lockPaths.get(i)) : LockPart.mutex(lockPaths.get(i)));
    }
    return parts;
  }

  /** The ZooKeeper paths whose children are the nodes of a lock named {@code path}. */
  public List<String> lockPaths(String path, int paths) {
    if (!isMulti()) {
      return List.of(path);
    }
    if (paths < 1 || paths > MAX_PATHS) {
      throw new IllegalArgumentException("a multi-lock takes 1 to 26 paths: " + paths);
    }
    List<String> lockPaths = new ArrayList<>(paths);
    for (int i = 0; i < paths; i++) {
      lockPaths.add(path + "-" + (char) ('a' + i));
    }
    return lockPaths;
  }

  /**
   * The directories {@code library}'s lock creates its nodes in, so that benchmarks can create them
   * up front. Curator's semaphore mutex keeps two ({@code locks} and {@code leases}); a multi-lock
   * one per path; the others the lock path itself.
   */
  public List<String> directories(Library library, String path, int paths) {
    if (this == NON_REENTRANT_MUTEX && library == Library.CURATOR) {
      return List.of(ZKPaths.makePath(path, "locks"), ZKPaths.makePath(path, "leases"));
    }
    return lockPaths(path, paths);
  }

  /**
   * A new lock of {@code library}; nothing is sent to ZooKeeper until it is acquired.
   *
   * @param path the lock's name; a multi-lock locks {@link #lockPaths(String, int) paths by it}
   * @param paths K for a multi-lock; ignored by single-path recipes
   */
  public InterProcessLock newLock(
      Library library, CuratorFramework client, String path, int paths) {
    List<LockPart> parts = parts(path, paths);
    return isMulti() ? library.multiLock(client, parts) : library.lock(client, parts.get(0));
  }

  /** A new Lockstep lock of this recipe, as {@link #newLock} builds it. */
  public FencedLock newFencedLock(CuratorFramework client, String path, int paths) {
    return (FencedLock) newLock(Library.LOCKSTEP, client, path, paths);
  }
}

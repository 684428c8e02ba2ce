package io.lockstep.bench;

import io.lockstep.recipes.locks.MultiMutex;
import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.utils.ZKPaths;

/**
 * A lock recipe as both libraries implement it: which class to build for a library, and which
 * directories it uses under a lock path, so that benchmarks can create them up front.
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
  MULTI("multi-lock", "InterProcessMultiLock", "MultiMutex");

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
    return this == MULTI ? label + ", K = " + paths : label;
  }

  /** The class (or method) that implements this recipe in {@code library}. */
  public String className(Library library) {
    return library == Library.CURATOR ? curatorClass : lockstepClass;
  }

  /**
   * A new lock object; nothing is sent to ZooKeeper until it is acquired.
   *
   * @param path the lock path; a multi-lock locks {@link #lockPaths(String, int) paths under it}
   * @param paths the number of paths of a multi-lock, ignored by the other recipes
   */
  public InterProcessLock newLock(
      Library library, CuratorFramework client, String path, int paths) {
    boolean curator = library == Library.CURATOR;
    return switch (this) {
      case MUTEX ->
          curator ? new InterProcessMutex(client, path) : new ReentrantMutex(client, path);
      case NON_REENTRANT_MUTEX ->
          curator
              ? new InterProcessSemaphoreMutex(client, path)
              : new NonReentrantMutex(client, path);
      case READ ->
          curator
              ? new InterProcessReadWriteLock(client, path).readLock()
              : new ReadWriteMutex(client, path).readLock();
      case WRITE ->
          curator
              ? new InterProcessReadWriteLock(client, path).writeLock()
              : new ReadWriteMutex(client, path).writeLock();
      case MULTI -> newMultiLock(library, client, lockPaths(path, paths));
    };
  }

  /** A new multi-lock of {@code library} that takes every path in {@code paths} as a mutex. */
  public static InterProcessLock newMultiLock(
      Library library, CuratorFramework client, List<String> paths) {
    return library == Library.CURATOR
        ? new InterProcessMultiLock(client, paths)
        : new MultiMutex(client, paths);
  }

  /** The lock paths of a multi-lock on {@code paths} paths under {@code path}. */
  public static List<String> lockPaths(String path, int paths) {
    List<String> lockPaths = new ArrayList<>(paths);
    for (int i = 0; i < paths; i++) {
      lockPaths.add(ZKPaths.makePath(path, String.format("p%02d", i)));
    }
    return lockPaths;
  }

  /**
   * The directories the library's lock creates its nodes in. Curator's semaphore mutex keeps two
   * ({@code locks} and {@code leases}); a multi-lock one per path; the others the lock path itself.
   */
  public List<String> directories(Library library, String path, int paths) {
    if (this == MULTI) {
      return lockPaths(path, paths);
    }
    if (this == NON_REENTRANT_MUTEX && library == Library.CURATOR) {
      return List.of(ZKPaths.makePath(path, "locks"), ZKPaths.makePath(path, "leases"));
    }
    return List.of(path);
  }
}

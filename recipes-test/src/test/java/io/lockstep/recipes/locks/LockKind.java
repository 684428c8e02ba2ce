package io.lockstep.recipes.locks;

import io.lockstep.testing.Recipe;
import java.util.List;
import java.util.function.BiFunction;
import org.apache.curator.framework.CuratorFramework;

/**
 * Every exclusive lock type and driver the contract suites run over: Lockstep's locks of the {@link
 * Recipe} catalogue, each with the number of paths it takes, and both mutexes with local handoff.
 */
enum LockKind {
  REENTRANT_MUTEX(Recipe.MUTEX, 1),
  NON_REENTRANT_MUTEX(Recipe.NON_REENTRANT_MUTEX, 1),
  WRITE_LOCK(Recipe.WRITE, 1),
  MULTI_MUTEX(Recipe.MULTI, 3),
  MULTI_MUTEX_MIXED_MODES(Recipe.MULTI_MIXED, 2),
  /** Local handoff with a bound of 2, so that runs of local holds reach it. */
  REENTRANT_MUTEX_LOCAL_HANDOFF(
      Recipe.MUTEX,
      1,
      (client, path) -> ReentrantMutex.builder(client, path).localHandoff(2).build()),
  NON_REENTRANT_MUTEX_LOCAL_HANDOFF(
      Recipe.NON_REENTRANT_MUTEX,
      1,
      (client, path) -> NonReentrantMutex.builder(client, path).localHandoff(2).build()),
  /** The write side of a read-write lock whose readers share a node and whose writers hand off. */
  WRITE_LOCK_LOCAL_HANDOFF(
      Recipe.WRITE,
      1,
      (client, path) -> ReadWriteMutex.builder(client, path).localHandoff(2).build().writeLock());

  private final Recipe recipe;
  private final int paths;

  @SuppressWarnings("ImmutableEnumChecker") // a stateless lambda
  private final BiFunction<CuratorFramework, String, FencedLock> factory;

  LockKind(Recipe recipe, int paths) {
    this(recipe, paths, (client, path) -> recipe.newFencedLock(client, path, paths));
  }

  LockKind(Recipe recipe, int paths, BiFunction<CuratorFramework, String, FencedLock> factory) {
    this.recipe = recipe;
    this.paths = paths;
    this.factory = factory;
  }

  /**
   * A new lock object on the lock named {@code path} (a multi-lock expands it to several paths).
   */
  FencedLock newLock(CuratorFramework client, String path) {
    return factory.apply(client, path);
  }

  /** The ZooKeeper paths whose children are this lock's nodes. */
  List<String> lockPaths(String path) {
    return recipe.lockPaths(path, paths);
  }

  /** Whether holds belong to threads (reentrant) rather than to the lock object. */
  boolean isThreadBound() {
    return recipe.isThreadBound();
  }

  /** Whether a holder notices that a third party deleted its node (single-path locks do). */
  boolean detectsNodeDeletion() {
    return recipe.detectsNodeDeletion();
  }

  /**
   * Whether lock objects of one client on one path share one node (local handoff): they still
   * exclude each other, but queue in memory, not in ZooKeeper.
   */
  boolean handsOffLocally() {
    return this == REENTRANT_MUTEX_LOCAL_HANDOFF
        || this == NON_REENTRANT_MUTEX_LOCAL_HANDOFF
        || this == WRITE_LOCK_LOCAL_HANDOFF;
  }
}

package io.lockstep.recipes.locks;

import io.lockstep.testing.Recipe;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;

/**
 * Every exclusive lock type and driver the contract suites run over: Lockstep's locks of the {@link
 * Recipe} catalogue, each with the number of paths it takes.
 */
enum LockKind {
  REENTRANT_MUTEX(Recipe.MUTEX, 1),
  NON_REENTRANT_MUTEX(Recipe.NON_REENTRANT_MUTEX, 1),
  WRITE_LOCK(Recipe.WRITE, 1),
  MULTI_MUTEX(Recipe.MULTI, 3),
  MULTI_MUTEX_MIXED_MODES(Recipe.MULTI_MIXED, 2);

  private final Recipe recipe;
  private final int paths;

  LockKind(Recipe recipe, int paths) {
    this.recipe = recipe;
    this.paths = paths;
  }

  /**
   * A new lock object on the lock named {@code path} (a multi-lock expands it to several paths).
   */
  FencedLock newLock(CuratorFramework client, String path) {
    return recipe.newFencedLock(client, path, paths);
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
}

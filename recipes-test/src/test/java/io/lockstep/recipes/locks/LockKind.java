package io.lockstep.recipes.locks;

import java.util.List;
import org.apache.curator.framework.CuratorFramework;

/** Every exclusive lock type and driver the contract suites run over. */
enum LockKind {
  REENTRANT_MUTEX {
    @Override
    FencedLock newLock(CuratorFramework client, String path) {
      return new ReentrantMutex(client, path);
    }
  },
  NON_REENTRANT_MUTEX {
    @Override
    FencedLock newLock(CuratorFramework client, String path) {
      return new NonReentrantMutex(client, path);
    }

    @Override
    boolean isThreadBound() {
      return false;
    }
  },
  WRITE_LOCK {
    @Override
    FencedLock newLock(CuratorFramework client, String path) {
      return new ReadWriteMutex(client, path).writeLock();
    }
  },
  MULTI_MUTEX {
    @Override
    FencedLock newLock(CuratorFramework client, String path) {
      return new MultiMutex(client, lockPaths(path));
    }

    @Override
    List<String> lockPaths(String path) {
      return List.of(path + "-a", path + "-b", path + "-c");
    }

    @Override
    boolean detectsNodeDeletion() {
      return false;
    }
  },
  MULTI_MUTEX_MIXED_MODES {
    @Override
    FencedLock newLock(CuratorFramework client, String path) {
      return MultiMutex.builder(client).write(path + "-w").mutex(path + "-m").build();
    }

    @Override
    List<String> lockPaths(String path) {
      return List.of(path + "-w", path + "-m");
    }

    @Override
    boolean detectsNodeDeletion() {
      return false;
    }
  };

  /**
   * A new lock object on the lock named {@code path} (a multi-lock expands it to several paths).
   */
  abstract FencedLock newLock(CuratorFramework client, String path);

  /** The ZooKeeper paths whose children are this lock's nodes. */
  List<String> lockPaths(String path) {
    return List.of(path);
  }

  /** Whether holds belong to threads (reentrant) rather than to the lock object. */
  boolean isThreadBound() {
    return true;
  }

  /** Whether a holder notices that a third party deleted its node (single-path locks do). */
  boolean detectsNodeDeletion() {
    return true;
  }
}

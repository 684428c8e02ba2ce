package io.lockstep.recipes.locks.curator;

import io.lockstep.recipes.locks.ReadWriteMutex;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.TestInterProcessMutexBase;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;

/**
 * Curator's own mutex tests ({@code TestInterProcessMutexBase}) run on the write side of {@link
 * ReadWriteMutex}, which must behave as the reentrant mutex that Curator's write lock is. Curator's
 * {@code TestInterProcessReadWriteLock} builds its locks itself and cannot be subclassed: {@code
 * ReadWriteMutexTest} tests its behaviours on ours.
 */
@Tag("curator")
@Timeout(120)
class WriteLockCuratorTest extends TestInterProcessMutexBase {
  private static final String LOCK_PATH = LOCK_BASE_PATH + "/our-lock";

  @Override
  protected InterProcessLock makeLock(CuratorFramework client) {
    return new ReadWriteMutex(client, LOCK_PATH).writeLock();
  }
}

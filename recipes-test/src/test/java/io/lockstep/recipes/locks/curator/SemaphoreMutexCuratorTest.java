package io.lockstep.recipes.locks.curator;

import io.lockstep.recipes.locks.SemaphoreMutex;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.TestInterProcessSemaphoreMutex;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;

/**
 * Curator's own tests of {@code InterProcessSemaphoreMutex} run on {@link SemaphoreMutex}, the lock
 * on that class's own nodes: the mutex tests of {@code TestInterProcessMutexBase} but the three
 * reentrancy tests, which Curator's class itself disables for a non-reentrant lock.
 */
@Tag("curator")
@Timeout(120)
class SemaphoreMutexCuratorTest extends TestInterProcessSemaphoreMutex {
  private static final String LOCK_PATH = LOCK_BASE_PATH + "/our-lock";

  @Override
  protected InterProcessLock makeLock(CuratorFramework client) {
    return new SemaphoreMutex(client, LOCK_PATH);
  }
}

package io.lockstep.recipes.locks.curator;

import io.lockstep.recipes.locks.ReentrantMutex;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.TestInterProcessMutexBase;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;

/**
 * Curator's own mutex tests ({@code TestInterProcessMutexBase}) run on a {@link ReentrantMutex}
 * that hands off locally: the locks each test makes on one client share one place in the queue, and
 * must still exclude each other, survive a killed session and a restarted server, and leave the
 * lock directories to be reaped.
 */
@Tag("curator")
@Timeout(120)
class LocalHandoffCuratorTest extends TestInterProcessMutexBase {
  private static final String LOCK_PATH = LOCK_BASE_PATH + "/our-lock";

  @Override
  protected InterProcessLock makeLock(CuratorFramework client) {
    return ReentrantMutex.builder(client, LOCK_PATH).localHandoff().build();
  }
}

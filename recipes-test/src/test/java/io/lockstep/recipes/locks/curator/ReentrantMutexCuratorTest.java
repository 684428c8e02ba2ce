package io.lockstep.recipes.locks.curator;

import io.lockstep.recipes.locks.ReentrantMutex;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.TestInterProcessMutexBase;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;

/**
 * Curator's own mutex tests ({@code TestInterProcessMutexBase}, from curator-recipes' test jar) run
 * on {@link ReentrantMutex}: every test Curator runs on {@code InterProcessMutex} through its lock
 * factory. {@code TestInterProcessMutex}'s own tests build an {@code InterProcessMutex} themselves,
 * so they are not inherited; docs/migration.md says where we test the same behaviour.
 */
@Tag("curator")
@Timeout(120)
class ReentrantMutexCuratorTest extends TestInterProcessMutexBase {
  private static final String LOCK_PATH = LOCK_BASE_PATH + "/our-lock";

  @Override
  protected InterProcessLock makeLock(CuratorFramework client) {
    return new ReentrantMutex(client, LOCK_PATH);
  }
}

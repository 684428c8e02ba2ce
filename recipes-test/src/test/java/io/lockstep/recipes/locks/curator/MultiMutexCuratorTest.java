package io.lockstep.recipes.locks.curator;

import io.lockstep.recipes.locks.MultiMutex;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.TestInterProcessMutexBase;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;

/**
 * Curator's own mutex tests ({@code TestInterProcessMutexBase}) run on the atomic {@link
 * MultiMutex} over two paths, as {@code TestInterProcessMultiMutex} runs them on {@code
 * InterProcessMultiLock}. That class's own two tests compose Curator's locks themselves, so they
 * are not inherited; {@code MultiMutexTest} tests the same behaviour of the composed form.
 */
@Tag("curator")
@Timeout(120)
class MultiMutexCuratorTest extends TestInterProcessMutexBase {
  private static final List<String> LOCK_PATHS =
      List.of(LOCK_BASE_PATH + "/our-lock-1", LOCK_BASE_PATH + "/our-lock-2");

  @Override
  protected InterProcessLock makeLock(CuratorFramework client) {
    return new MultiMutex(client, LOCK_PATHS);
  }
}

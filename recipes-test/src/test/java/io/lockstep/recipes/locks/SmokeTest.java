package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.testing.ZooKeeperExtension;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(60)
class SmokeTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void acquireAndRelease() throws Exception {
    CuratorFramework a = zk.newClient();
    CuratorFramework b = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex first = new ReentrantMutex(a, path);
    ReentrantMutex second = new ReentrantMutex(b, path);
    first.acquire();
    assertThat(first.getParticipantNodes()).hasSize(1);
    long start = System.nanoTime();
    assertThat(second.acquire(300, TimeUnit.MILLISECONDS)).isFalse();
    System.out.println("timed out after ms " + (System.nanoTime() - start) / 1_000_000);
    first.release();
    assertThat(second.acquire(1, TimeUnit.SECONDS)).isTrue();
    assertThat(second.fencingToken()).isGreaterThan(0);
    second.release();
  }
}

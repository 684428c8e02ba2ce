package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.testkit.LockstepZooKeeper;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The library and its test kit leave ZooKeeper's native Netty jars out of their dependencies
 * ({@code netty-transport-native-epoll} and {@code netty-tcnative-boringssl-static}, whose
 * platform-classified jars a Spring Boot parent may ask for at versions that are not published: see
 * recipes/pom.xml), and this module leaves them out too, so every test of the suite runs as a
 * user's application does: without them. Here the class path is checked, and a lock is taken and
 * inspected on an ensemble of the kit (quorum connections included) over ZooKeeper's NIO client and
 * server.
 */
@Timeout(60)
class NativeNettyFreeTest {
  @RegisterExtension static final LockstepZooKeeper zk = LockstepZooKeeper.ensemble(3);

  @Test
  void theNativeNettyClasses_areNotOnTheClassPath_butNettysHandlerIs() throws Exception {
    assertThatThrownBy(() -> Class.forName("io.netty.channel.epoll.Epoll"))
        .isInstanceOf(ClassNotFoundException.class);
    assertThatThrownBy(() -> Class.forName("io.netty.internal.tcnative.SSL"))
        .isInstanceOf(ClassNotFoundException.class);
    // the ZooKeeper client's configuration cannot be loaded without it (ClientX509Util)
    assertThat(Class.forName("io.netty.handler.ssl.SslContext")).isNotNull();
  }

  @Test
  void aLock_isTakenAndInspected_withoutTheNativeJars() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("orders");
    ReentrantMutex lock = new ReentrantMutex(client, path);
    lock.acquire();
    try {
      LockInspector.Snapshot snapshot = new LockInspector(client).inspect(path);
      assertThat(snapshot.holders()).hasSize(1);
      assertThat(snapshot.holders().get(0).sessionId())
          .isEqualTo(client.getZookeeperClient().getZooKeeper().getSessionId());
    } finally {
      lock.release();
    }
  }
}

package com.example.locks;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.spring.LockstepLock;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testkit.LockstepZooKeeper;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The application's context starts on Spring Boot 4.1 against a real ZooKeeper (the test kit's),
 * and a lock is taken through the auto-configured registry: its node is on the server while held.
 */
@SpringBootTest(properties = "lockstep.registry.root=/boot-app")
@Timeout(120)
class LocksApplicationTest {
  @RegisterExtension static final LockstepZooKeeper zk = LockstepZooKeeper.server();

  @DynamicPropertySource
  static void zooKeeper(DynamicPropertyRegistry registry) {
    registry.add("lockstep.zookeeper.connect-string", zk::connectString);
  }

  @Autowired LockstepLockRegistry locks;

  @Test
  void aLock_isTakenThroughTheAutoConfiguredRegistry() throws Exception {
    LockstepLock lock = locks.obtain("invoices/17");
    assertThat(lock.tryLock(30, TimeUnit.SECONDS)).isTrue();
    try {
      assertThat(zk.newClient().getChildren().forPath("/boot-app/invoices/17")).hasSize(1);
      assertThat(lock.fencingToken()).isPositive();
    } finally {
      lock.unlock();
    }
  }
}

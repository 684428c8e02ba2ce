package io.lockstep.recipes.locks.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The server goes away and comes back within the session timeout: the session survives. */
@Timeout(90)
class ServerRestartTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void serverRestart_holderIsAtRiskThenHeldAgain_andWaiterStillGetsTheLock() throws Exception {
    ReentrantMutex holder = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    ReentrantMutex waiter = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    holder.getStateListenable().addListener(change -> states.add(change.state()));
    holder.acquire();
    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Void> waiting = thread.run(waiter::acquire);
      await().until(() -> holder.getParticipantNodes().size() == 2);

      zk.server().stop();
      await().atMost(Duration.ofSeconds(20)).until(() -> states.contains(LockState.AT_RISK));
      zk.server().restart();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> states.equals(List.of(LockState.HELD, LockState.AT_RISK, LockState.HELD)));

      holder.checkHeld();
      assertThat(waiting).isNotDone();
      holder.release();
      waiting.get(20, TimeUnit.SECONDS);
      thread.run(waiter::release).get(10, TimeUnit.SECONDS);
    }
  }
}

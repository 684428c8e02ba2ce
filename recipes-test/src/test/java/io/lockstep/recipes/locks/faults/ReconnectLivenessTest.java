package io.lockstep.recipes.locks.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryForever;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 32, defect 2: acquires started while ZooKeeper is down are granted within a bound once it
 * is back, whatever the retry policy. With a policy whose delay is 30 s, an attempt whose create
 * failed during the outage would otherwise wait that long after the server is back: it goes on at
 * the reconnect instead (the policy decides whether to retry, never how long after ZooKeeper is
 * back).
 */
@Timeout(120)
class ReconnectLivenessTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Reconnecting and a few round trips, with room for a loaded machine: far below 30 s. */
  private static final Duration BOUND = Duration.ofSeconds(10);

  @ParameterizedTest(name = "RetryForever({0})")
  @ValueSource(ints = {200, 30_000})
  void acquiresStartedWhileTheServerIsDown_areGrantedSoonAfterItIsBack(int retryDelayMillis)
      throws Exception {
    RetryPolicy policy = new RetryForever(retryDelayMillis);
    CuratorFramework client = zk.newClient(b -> b.retryPolicy(policy).connectionTimeoutMs(2_000));
    List<ConnectionState> states = new CopyOnWriteArrayList<>();
    client.getConnectionStateListenable().addListener((c, state) -> states.add(state));
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock"));

    zk.server().stop();
    await().atMost(Duration.ofSeconds(20)).until(() -> states.contains(ConnectionState.SUSPENDED));
    try (LockThread blocking = new LockThread("blocking")) {
      CompletableFuture<Void> blockingDone =
          blocking.run(
              () -> {
                lock.acquire();
                lock.release();
              });
      CompletableFuture<LockHold> async = lock.acquireAsync().toCompletableFuture();
      CompletableFuture<Void> asyncDone = async.thenAccept(LockHold::close);
      // The outage lasts long enough for the first creates to fail with connection loss.
      await().pollDelay(Duration.ofSeconds(3)).until(() -> true);
      assertThat(blockingDone).isNotDone();
      assertThat(asyncDone).isNotDone();

      zk.server().restart();
      CompletableFuture.allOf(blockingDone, asyncDone).get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
    }
    assertThat(lock.isAcquiredInThisProcess()).isFalse();
  }
}

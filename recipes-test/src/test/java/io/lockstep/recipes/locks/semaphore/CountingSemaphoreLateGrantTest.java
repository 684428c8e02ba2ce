package io.lockstep.recipes.locks.semaphore;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryNTimes;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A semaphore request that has won its lease ends only once its {@code locks} mutex is given back
 * (Curator's waiters queue for it). A caller interrupted in between gives up after the grace and
 * gets its {@link InterruptedException}; the lease it was granted then goes back when the request
 * completes, instead of staying held by nobody until the session ends.
 */
@Timeout(60)
class CountingSemaphoreLateGrantTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** One way, so that the mutex's delete is answered a full second after the server made it. */
  private static final int LATENCY_MILLIS = 1_000;

  @Test
  void aCallerInterruptedAfterItsGrant_beforeTheMutexIsGone_leavesNoLeaseBehind() throws Exception {
    CuratorFramework admin = zk.newClient();
    String leases = zk.path("sem/leases");
    String locks = zk.path("sem/locks");
    LockHold held = new CountingSemaphore(admin, zk.path("sem"), 1).hold();
    TcpProxy proxy = zk.proxy();
    CuratorFramework client =
        zk.newClient(
            b -> b.connectString(proxy.connectString()).retryPolicy(new RetryNTimes(100, 100)));
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("sem"), 1);
    CompletableFuture<Throwable> outcome = new CompletableFuture<>();
    Thread waiter =
        new Thread(
            () -> {
              try {
                List<LockHold> granted = semaphore.tryHold(1, Duration.ofSeconds(40));
                granted.forEach(LockHold::close);
                outcome.complete(null);
              } catch (InterruptedException | RuntimeException e) {
                outcome.complete(e);
              }
            },
            "semaphore-waiter");
    waiter.start();
    // Queued: its lease waits behind the holder's, and its mutex node stays until it is granted.
    Awaitility.await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(ZooKeeperExtension.childrenOrNone(admin, leases)).hasSize(2);
              assertThat(ZooKeeperExtension.childrenOrNone(admin, locks)).hasSize(1);
            });

    proxy.setLatency(LATENCY_MILLIS);
    held.close();
    // The server deletes the mutex node once the lease is granted; its answer is a second away.
    Awaitility.await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(10))
        .until(() -> ZooKeeperExtension.childrenOrNone(admin, locks).isEmpty());
    waiter.interrupt();

    assertThat(outcome.get(10, TimeUnit.SECONDS))
        .as("the caller gave up within the grace, before the request completed")
        .isInstanceOf(InterruptedException.class);
    assertThat(ZooKeeperExtension.childrenOrNone(admin, leases))
        .as("the granted lease is still there while its request completes")
        .hasSize(1);
    proxy.setLatency(0);
    Awaitility.await()
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () ->
                assertThat(ZooKeeperExtension.childrenOrNone(admin, leases))
                    .as("the lease nobody took went back")
                    .isEmpty());
    semaphore.close();
  }
}

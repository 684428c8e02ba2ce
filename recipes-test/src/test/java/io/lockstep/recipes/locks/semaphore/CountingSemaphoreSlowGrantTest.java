package io.lockstep.recipes.locks.semaphore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A timed request granted before its deadline on a slow link: it returns its lease within the
 * budget plus the 200 ms grace, though the delete of its {@code locks} mutex (which Curator's
 * waiters queue for) is answered later; that delete goes on in the background. Before, the request
 * waited for it up to the connection timeout: the asynchronous stage completed seconds past the
 * deadline, and the blocking call gave up at its deadline and gave the granted lease back.
 *
 * <p>The link adds 2 s each way once the request waits behind the only lease. The holder lets go 1
 * s in: the waiter hears it about 2 s later, its read of the leases is answered about 4 s after
 * that (granted about 7 s in), and the mutex's delete reaches the server about 9 s in, answered
 * about 11 s in: past the 10 s budget.
 */
@Timeout(90)
class CountingSemaphoreSlowGrantTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final long LATENCY_MILLIS = 2_000;
  private static final Duration BUDGET = Duration.ofSeconds(10);

  /** How the caller asks. */
  enum Form {
    ASYNC,
    TRY_HOLD;

    CompletableFuture<Optional<LockHold>> ask(CountingSemaphore semaphore) {
      if (this == ASYNC) {
        return semaphore.acquireAsync(BUDGET).toCompletableFuture().thenApply(Optional::of);
      }
      return CompletableFuture.supplyAsync(
          () -> {
            try {
              return semaphore.tryHold(BUDGET);
            } catch (InterruptedException e) {
              throw new IllegalStateException(e);
            }
          });
    }
  }

  @ParameterizedTest
  @EnumSource(Form.class)
  void grantedBeforeItsDeadline_returnsTheLease_withinTheBudgetAndTheGrace(Form form)
      throws Exception {
    CuratorFramework admin = zk.newClient();
    String path = zk.path("semaphore");
    LockHold held = new CountingSemaphore(admin, path, 1).hold();
    TcpProxy proxy = zk.proxy();
    CuratorFramework client =
        zk.newClient(
            b -> b.connectString(proxy.connectString()).retryPolicy(new RetryNTimes(100, 100)));
    CountingSemaphore semaphore = new CountingSemaphore(client, path, 1);
    long start = System.nanoTime();
    CompletableFuture<Optional<LockHold>> asked = form.ask(semaphore);
    CompletableFuture<Long> returnedAt = asked.handle((lease, failure) -> System.nanoTime());
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                ZooKeeperExtension.childrenOrNone(admin, path + "/leases").size() == 2
                    && ZooKeeperExtension.childrenOrNone(admin, path + "/locks").size() == 1);
    proxy.setLatency(LATENCY_MILLIS);
    await().atMost(Duration.ofSeconds(5)).until(() -> System.nanoTime() - start > 1_000_000_000L);
    held.close();
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> ZooKeeperExtension.childrenOrNone(admin, path + "/locks").isEmpty());
    long grantedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    Optional<LockHold> lease = asked.get(30, TimeUnit.SECONDS);
    long returnedMillis = TimeUnit.NANOSECONDS.toMillis(returnedAt.get() - start);
    proxy.setLatency(0);
    lease.ifPresent(LockHold::close);
    semaphore.close();

    assertThat(grantedMillis)
        .as("the mutex's delete reached the server in time")
        .isLessThan(10_000);
    assertThat(lease)
        .as("granted by %d ms of a 10 s budget, returned by %d ms", grantedMillis, returnedMillis)
        .isPresent();
    assertThat(returnedMillis)
        .as("returned within the budget, the 200 ms grace and scheduling noise")
        .isLessThan(BUDGET.toMillis() + 200 + 500);
  }
}

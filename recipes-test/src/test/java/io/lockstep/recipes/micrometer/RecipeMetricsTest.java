package io.lockstep.recipes.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The meters of a counting semaphore and a leader election, after scripted runs. */
@Timeout(90)
class RecipeMetricsTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final String SEMAPHORE = "CountingSemaphore";
  private static final String ELECTION = "LeaderElection";

  @Test
  void semaphore_oneAcquirePerRequest_byItsOutcome() throws Exception {
    CuratorFramework client = zk.newClient();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new LockstepMetrics(client).bindTo(registry);
    String path = zk.path("semaphore");
    CountingSemaphore semaphore = new CountingSemaphore(client, path, 1);
    CountingSemaphore other = new CountingSemaphore(zk.newClient(), path, 1); // not measured

    semaphore.acquire().close();
    LockHold taken = other.acquire();
    assertThat(semaphore.tryHold(Duration.ZERO)).isEmpty();
    assertThat(semaphore.tryHold(Duration.ofMillis(200))).isEmpty();
    CompletableFuture<LockHold> cancelled =
        semaphore.acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    await().until(() -> gauge(registry, LockstepMetrics.WAITERS) == 1);
    assertThat(other.getParticipantNodes()).hasSize(2); // the waiting lease, the mutex holder's
    cancelled.cancel(true);
    await().until(() -> acquires(registry, SEMAPHORE, "WITHDRAWN") == 1);
    try (LockThread waiter = new LockThread("waiter")) {
      CompletableFuture<LockHold> waited = waiter.call(semaphore::acquire);
      await().until(() -> gauge(registry, LockstepMetrics.WAITERS) == 1);
      taken.close();
      waited.get(10, TimeUnit.SECONDS).close();
    }

    await().until(() -> held(registry, SEMAPHORE) == 2);
    assertThat(acquires(registry, SEMAPHORE, "GRANTED")).isEqualTo(2);
    assertThat(acquires(registry, SEMAPHORE, "TIMED_OUT")).isEqualTo(2);
    assertThat(acquires(registry, SEMAPHORE, "WITHDRAWN")).isEqualTo(1);
    assertThat(acquires(registry, SEMAPHORE, "FAILED")).isZero();
    assertThat(acquires(registry, SEMAPHORE, "UNREACHABLE")).isZero();
    // One acquisition per request, each counted once by its outcome (above); which attempt carries
    // it, fast try included, is RecipeObservationTest's script. No time is asserted: the budget
    // counts from the call, the timer from the observation's start, a moment later.
    assertThat(registry.getMeters())
        .as("the locks mutex is no lock of its own")
        .allSatisfy(meter -> assertThat(meter.getId().getTag("recipe")).isNotEqualTo("place"));
    assertThat(gauge(registry, LockstepMetrics.WAITERS)).isZero();
    assertThat(gauge(registry, LockstepMetrics.HOLDERS)).isZero();
  }

  @Test
  void election_oneAcquirePerTerm_heldUntilClosed() throws Exception {
    CuratorFramework client = zk.newClient();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new LockstepMetrics(client).bindTo(registry);
    String path = zk.path("election");
    LeaderElection first = LeaderElection.builder(zk.newClient(), path).build(); // not measured
    first.start();
    assertThat(first.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    LeaderElection second = LeaderElection.builder(client, path).build();
    LeaderElection third = LeaderElection.builder(client, path).build();

    second.start();
    third.start();
    await().until(() -> gauge(registry, LockstepMetrics.WAITERS) == 2);
    third.close();
    first.close();
    assertThat(second.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    assertThat(gauge(registry, LockstepMetrics.HOLDERS)).isEqualTo(1);
    second.close();

    await().until(() -> held(registry, ELECTION) == 1);
    assertThat(acquires(registry, ELECTION, "GRANTED")).isEqualTo(1);
    assertThat(acquires(registry, ELECTION, "WITHDRAWN")).isEqualTo(1);
    assertThat(acquires(registry, ELECTION, "TIMED_OUT")).isZero();
    assertThat(acquires(registry, ELECTION, "FAILED")).isZero();
    assertThat(gauge(registry, LockstepMetrics.WAITERS)).isZero();
    assertThat(gauge(registry, LockstepMetrics.HOLDERS)).isZero();
  }

  private static long acquires(MeterRegistry registry, String recipe, String outcome) {
    Timer timer =
        registry.find(LockstepMetrics.ACQUIRE).tags("recipe", recipe, "outcome", outcome).timer();
    return timer == null ? 0 : timer.count();
  }

  private static long held(MeterRegistry registry, String recipe) {
    Timer timer = registry.find(LockstepMetrics.HELD).tags("recipe", recipe).timer();
    return timer == null ? 0 : timer.count();
  }

  private static double gauge(MeterRegistry registry, String name) {
    return registry.get(name).gauge().value();
  }
}

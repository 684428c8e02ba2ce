package io.lockstep.recipes.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Micrometer meters of a client's locks, after scripted runs against a real server. */
@Timeout(90)
class LockstepMetricsTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final String MUTEX = "ReentrantMutex";

  /** A dashboard shows 0 losses, not "no data", for a lock that has been used and never lost. */
  @Test
  void theAtRiskAndLostCounters_showZero_fromTheFirstAttempt_inRegistriesBoundLaterToo()
      throws Exception {
    CuratorFramework client = zk.newClient();
    SimpleMeterRegistry early = new SimpleMeterRegistry();
    LockstepMetrics metrics = new LockstepMetrics(client);
    metrics.bindTo(early);
    assertThat(early.find(LockstepMetrics.LOST).counters()).isEmpty();

    ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));
    lock.acquire();
    lock.release();
    SimpleMeterRegistry late = new SimpleMeterRegistry();
    metrics.bindTo(late);

    for (SimpleMeterRegistry registry : List.of(early, late)) {
      for (String name : List.of(LockstepMetrics.LOST, LockstepMetrics.AT_RISK)) {
        assertThat(registry.find(name).tag("recipe", MUTEX).counters())
            .singleElement()
            .satisfies(counter -> assertThat(counter.count()).isZero());
      }
    }
  }

  @Test
  void aScriptedRun_withATimeoutAWithdrawalALossAndReleases_isCountedExactly() throws Exception {
    CuratorFramework client = zk.newClient();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new LockstepMetrics(client).bindTo(registry);
    ReentrantMutex other = new ReentrantMutex(zk.newClient(), zk.path("a")); // not measured
    ReentrantMutex a = new ReentrantMutex(client, zk.path("a"));
    ReentrantMutex b = new ReentrantMutex(client, zk.path("b"));

    // a timeout, then a withdrawal, while another client holds
    other.acquire();
    assertThat(a.acquire(100, TimeUnit.MILLISECONDS)).isFalse();
    CompletableFuture<LockHold> pending = a.acquireAsync().toCompletableFuture();
    await().until(() -> gauge(registry, LockstepMetrics.WAITERS) == 1);
    pending.cancel(true);
    await().until(() -> acquires(registry, "WITHDRAWN") == 1);
    assertThat(gauge(registry, LockstepMetrics.WAITERS)).isZero();

    // a waiter, granted when the other client releases, then released
    try (LockThread waiter = new LockThread("waiter")) {
      CompletableFuture<Void> waited = waiter.run(a::acquire);
      await().until(() -> gauge(registry, LockstepMetrics.WAITERS) == 1);
      other.release();
      waited.get(10, TimeUnit.SECONDS);
      await().until(() -> gauge(registry, LockstepMetrics.HOLDERS) == 1);
      assertThat(gauge(registry, LockstepMetrics.WAITERS)).isZero();
      waiter.run(a::release).get(10, TimeUnit.SECONDS);
    }
    assertThat(gauge(registry, LockstepMetrics.HOLDERS)).isZero();

    // a hold lost with its session, then released
    List<LockState> states = new CopyOnWriteArrayList<>();
    b.getStateListenable().addListener(change -> states.add(change.state()));
    b.acquire();
    await().until(() -> gauge(registry, LockstepMetrics.HOLDERS) == 1);
    Sessions.expire(client, zk.server().getConnectString());
    await().until(() -> counter(registry, LockstepMetrics.LOST) == 1);
    assertThat(gauge(registry, LockstepMetrics.HOLDERS)).as("a lost hold is not held").isZero();
    b.release();

    await().until(() -> held(registry).count() == 2);
    assertThat(acquires(registry, "TIMED_OUT")).isEqualTo(1);
    assertThat(acquires(registry, "WITHDRAWN")).isEqualTo(1);
    assertThat(acquires(registry, "GRANTED")).isEqualTo(2);
    assertThat(acquires(registry, "FAILED")).isZero();
    assertThat(counter(registry, LockstepMetrics.LOST)).isEqualTo(1);
    assertThat(states).containsSubsequence(LockState.AT_RISK, LockState.LOST);
    assertThat(counter(registry, LockstepMetrics.AT_RISK))
        .as("the connection dropped before the session was found expired")
        .isEqualTo(1);
    assertThat(gauge(registry, LockstepMetrics.WAITERS)).isZero();
    assertThat(gauge(registry, LockstepMetrics.HOLDERS)).isZero();
    Timer timedOut =
        registry.get(LockstepMetrics.ACQUIRE).tags("recipe", MUTEX, "outcome", "TIMED_OUT").timer();
    assertThat(timedOut.totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(100);
    assertThat(registry.getMeters())
        .as("no meter is tagged by path unless asked")
        .allSatisfy(meter -> assertThat(meter.getId().getTag("path")).isNull());
  }

  @Test
  void aReentrantAcquire_isNoAttempt() throws Exception {
    CuratorFramework client = zk.newClient();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new LockstepMetrics(client).bindTo(registry);
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));

    lock.acquire();
    lock.acquire();
    lock.release();
    lock.release();

    await().until(() -> held(registry).count() == 1);
    assertThat(acquires(registry, "GRANTED")).isEqualTo(1);
  }

  @Test
  void tagPaths_tagsTheNamedPaths_andEveryOtherAsOther() throws Exception {
    CuratorFramework client = zk.newClient();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    String billing = zk.path("billing");
    LockstepMetrics.builder(client)
        .tagPaths(Set.of(billing))
        .tags(Tags.of("zookeeper", "orders"))
        .build()
        .bindTo(registry);
    ReentrantMutex named = new ReentrantMutex(client, billing);
    ReentrantMutex unnamed1 = new ReentrantMutex(client, zk.path("order-1"));
    ReentrantMutex unnamed2 = new ReentrantMutex(client, zk.path("order-2"));

    named.acquire();
    unnamed1.acquire();
    unnamed2.acquire();
    await().until(() -> holders(registry, billing) == 1 && holders(registry, "other") == 2);
    named.release();
    unnamed1.release();
    unnamed2.release();

    await()
        .until(
            () ->
                registry.find(LockstepMetrics.HELD).tag("path", "other").timer() != null
                    && registry.get(LockstepMetrics.HELD).tag("path", "other").timer().count()
                        == 2);
    assertThat(registry.get(LockstepMetrics.HELD).tag("path", billing).timer().count())
        .isEqualTo(1);
    assertThat(registry.get(LockstepMetrics.ACQUIRE).tag("path", "other").timer().count())
        .isEqualTo(2);
    assertThat(registry.getMeters())
        .as("every meter has a path tag, and the extra tag")
        .allSatisfy(
            meter -> {
              assertThat(meter.getId().getTag("path")).isIn(billing, "other");
              assertThat(meter.getId().getTag("zookeeper")).isEqualTo("orders");
            });
    assertThat(holders(registry, billing)).isZero();
    assertThat(holders(registry, "other")).isZero();
  }

  @Test
  void metricsMadeWhileAnAttemptWaits_neverCountBelowZero() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex other = new ReentrantMutex(zk.newClient(), zk.path("a"));
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));
    other.acquire();
    try (LockThread waiter = new LockThread("waiter")) {
      CompletableFuture<Void> waited = waiter.run(lock::acquire);
      await().until(() -> other.getParticipantNodes().size() == 2);
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      new LockstepMetrics(client).bindTo(registry); // the attempt started before

      other.release();
      waited.get(10, TimeUnit.SECONDS);
      await().until(() -> gauge(registry, LockstepMetrics.HOLDERS) == 1);
      assertThat(gauge(registry, LockstepMetrics.WAITERS)).isZero();
      waiter.run(lock::release).get(10, TimeUnit.SECONDS);
      assertThat(gauge(registry, LockstepMetrics.HOLDERS)).isZero();
      assertThat(held(registry).count()).isEqualTo(1);
    }
  }

  @Test
  void close_stopsObserving_andRemovesTheGauges() throws Exception {
    CuratorFramework client = zk.newClient();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LockstepMetrics metrics = new LockstepMetrics(client);
    metrics.bindTo(registry);
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));
    lock.acquire();
    lock.release();
    await().until(() -> held(registry).count() == 1);

    metrics.close();
    lock.acquire();
    lock.release();

    metrics.close(); // again: nothing
    assertThatThrownBy(() -> metrics.bindTo(new SimpleMeterRegistry()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
    assertThat(registry.find(LockstepMetrics.WAITERS).gauge()).isNull();
    assertThat(registry.find(LockstepMetrics.HOLDERS).gauge()).isNull();
    await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(5))
        .until(() -> held(registry).count() == 1 && acquires(registry, "GRANTED") == 1);
  }

  @Test
  void bindingToTwoRegistries_recordsInBoth() throws Exception {
    CuratorFramework client = zk.newClient();
    SimpleMeterRegistry first = new SimpleMeterRegistry();
    SimpleMeterRegistry second = new SimpleMeterRegistry();
    LockstepMetrics metrics = new LockstepMetrics(client);
    metrics.bindTo(first);
    metrics.bindTo(second);
    metrics.bindTo(second); // again: nothing more
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));

    lock.acquire();
    lock.release();

    await().until(() -> held(first).count() == 1 && held(second).count() == 1);
    assertThat(second.find(LockstepMetrics.HOLDERS).gauges()).hasSize(1);
  }

  @Test
  void badInput_isRefused_namingTheArgument() {
    CuratorFramework client = zk.newClient();

    assertThatThrownBy(() -> new LockstepMetrics(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("client");
    assertThatThrownBy(() -> new LockstepMetrics(client).bindTo(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("registry");
    assertThatThrownBy(() -> LockstepMetrics.builder(client).tagPaths(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("paths");
    assertThatThrownBy(() -> LockstepMetrics.builder(client).tagPaths(Set.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("paths");
    assertThatThrownBy(() -> LockstepMetrics.builder(client).tagPaths(Set.of("other")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("paths must not contain 'other'");
    assertThatThrownBy(() -> LockstepMetrics.builder(client).tags(Tags.of("recipe", "x")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("extra");
    assertThatThrownBy(() -> LockstepMetrics.builder(client).tags(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("extra");
  }

  private static long acquires(MeterRegistry registry, String outcome) {
    Timer timer =
        registry.find(LockstepMetrics.ACQUIRE).tags("recipe", MUTEX, "outcome", outcome).timer();
    return timer == null ? 0 : timer.count();
  }

  private static Timer held(MeterRegistry registry) {
    Timer timer = registry.find(LockstepMetrics.HELD).tags("recipe", MUTEX).timer();
    return timer == null ? Timer.builder("none").register(new SimpleMeterRegistry()) : timer;
  }

  private static double counter(MeterRegistry registry, String name) {
    Counter counter = registry.find(name).tags("recipe", MUTEX).counter();
    return counter == null ? 0 : counter.count();
  }

  private static double gauge(MeterRegistry registry, String name) {
    return registry.get(name).gauge().value();
  }

  private static double holders(MeterRegistry registry, String path) {
    Gauge gauge = registry.get(LockstepMetrics.HOLDERS).tag("path", path).gauge();
    return gauge.value();
  }
}

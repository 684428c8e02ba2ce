package io.lockstep.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.docs.DocsExamplesTest.FencedStore;
import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.Leadership;
import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockInspector;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.micrometer.LockstepMetrics;
import io.lockstep.recipes.spring.LockstepLock;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testing.ZooKeeperExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.function.Function;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/** The examples of {@code docs/spring.md} and {@code docs/metrics.md}, run on a real server. */
@Timeout(60)
class IntegrationDocsExamplesTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  // ---- docs/spring.md ----

  @Test
  void spring_obtain_lockAndWriteWithTheFencingToken() throws Exception {
    // docs/spring.md: obtain
    // import io.lockstep.recipes.spring.LockstepLock;
    // import io.lockstep.recipes.spring.LockstepLockRegistry;
    // import java.util.concurrent.locks.Lock;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient(); // docs: ... a started client
    FencedStore orders = new FencedStore(); // docs: ... your store, see getting-started.md
    LockstepLockRegistry registry = new LockstepLockRegistry(client); // was: ZookeeperLockRegistry
    Lock lock = registry.obtain("order-17");
    lock.lock();
    try {
      orders.write("order-17", "paid", ((LockstepLock) lock).fencingToken());
    } finally {
      lock.unlock();
    }
    // docs: end
    assertThat(orders.read("order-17")).isEqualTo("paid");
    assertThat(registry.pathOf("order-17")).isEqualTo("/SpringIntegration-LockRegistry/order-17");
    assertThat(((LockstepLock) lock).fencedLock().getParticipantNodes()).isEmpty();
  }

  @Test
  void spring_severalKeys_oneAtomicLockOfBoth_excludingEachKeysOwnLock() throws Exception {
    String root = zk.path("registry");
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), root);
    LockstepLock single = new LockstepLockRegistry(zk.newClient(), root).obtain("account-4");
    single.lock();
    long before = single.fencingToken();
    single.unlock();
    // docs/spring.md: several keys
    // import io.lockstep.recipes.spring.LockstepLock;
    // import java.util.List;

    FencedStore ledger = new FencedStore(); // docs: ... your store, see getting-started.md
    LockstepLock accounts = registry.obtainAll(List.of("account-17", "account-4")); // any order
    accounts.lock();
    try {
      long token = accounts.fencingToken(); // greater than every token before on either key
      ledger.write("account-17", "-100", token);
      ledger.write("account-4", "+100", token);
    } finally {
      accounts.unlock();
    }
    // docs: end
    assertThat(ledger.read("account-4")).isEqualTo("+100");
    assertThatThrownBy(() -> ledger.write("account-4", "stale", before))
        .as("the multi-key token is greater than the single key's before it")
        .isInstanceOf(IllegalStateException.class);
    assertThat(registry.obtainAll(List.of("account-4", "account-17"))).isSameAs(accounts);
    assertThat(accounts.fencedLock().getParticipantNodes()).isEmpty();
  }

  @Test
  void spring_ttl_renewedHoldWritesTwice_andAnExpiredOneFailsSafe() throws Exception {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), "/locks");
    FencedStore orders = new FencedStore();
    // docs/spring.md: ttl
    // import io.lockstep.recipes.spring.LockstepLock;
    // import java.time.Duration;

    registry.setDefaultTtl(Duration.ofSeconds(30)); // for lock(), tryLock(...), executeLocked
    LockstepLock order = registry.obtain("order-18");
    // wait 5 s at most, then hold 10 s at most
    if (order.tryLock(Duration.ofSeconds(5), Duration.ofSeconds(10))) {
      try {
        orders.write("order-18", "packed", order.fencingToken());
        registry.renewLock("order-18"); // ten more seconds from now
        orders.write("order-18", "shipped", order.fencingToken());
      } finally {
        order.unlock(); // throws ConcurrentModificationException if the time to live ran out
      }
    }
    // docs: end
    assertThat(orders.read("order-18")).isEqualTo("shipped");
    assertThat(registry.defaultTtl()).isEqualTo(Duration.ofSeconds(30));

    order.lock(Duration.ofMillis(100)); // fails safe: lost and deleted at the deadline
    await().until(() -> order.fencedLock().getParticipantNodes().isEmpty());
    assertThatThrownBy(order::unlock).isInstanceOf(java.util.ConcurrentModificationException.class);
  }

  @Test
  void spring_rollingUpgrade_oldAndNewInstancesExcludeEachOther() throws Exception {
    CuratorFramework client = zk.newClient();
    // what Spring's ZookeeperLockRegistry(client) locks for the key "order-17":
    InterProcessMutex notYetUpgraded =
        new InterProcessMutex(zk.newClient(), "/SpringIntegration-LockRegistry/order-17");
    notYetUpgraded.acquire();
    try {
      Lock lock = new LockstepLockRegistry(client).obtain("order-17");
      assertThat(lock.tryLock(200, TimeUnit.MILLISECONDS)).isFalse();
    } finally {
      notYetUpgraded.release();
    }
  }

  @Test
  void spring_cache_keepsTheBound_andExpiresByAge() {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), "/locks");
    LockstepLock first = registry.obtain("order-1");
    // docs/spring.md: cache
    // import java.time.Duration;
    registry.setCacheCapacity(5_000); // n >= 1; a smaller bound drops the surplus at once
    registry.expireUnusedOlderThan(Duration.ofMinutes(10)); // negative: all unused
    // docs: end
    assertThat(registry.obtain("order-1")).as("obtained within the age: kept").isSameAs(first);
    for (int i = 2; i <= 5_001; i++) {
      registry.obtain("order-" + i);
    }
    assertThat(registry.obtain("order-1")).as("the least recent beyond 5,000").isNotSameAs(first);
  }

  @Test
  void spring_executeLocked_runsUnderTheLock() throws Exception {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), "/locks");
    InterProcessMutex otherInstance = new InterProcessMutex(zk.newClient(), "/locks/daily-report");
    // docs/spring.md: execute locked
    // import java.time.Duration;
    // import java.util.List;
    // import java.util.concurrent.CopyOnWriteArrayList;

    List<String> published = new CopyOnWriteArrayList<>();
    registry.executeLocked("daily-report", () -> published.add("daily report"));

    String outcome =
        registry.executeLocked("daily-report", Duration.ofSeconds(5), () -> "published again");
    // docs: end
    assertThat(published).containsExactly("daily report");
    assertThat(outcome).isEqualTo("published again");

    otherInstance.acquire();
    try {
      assertThatThrownBy(
              () ->
                  registry.executeLocked(
                      "daily-report", Duration.ofMillis(200), () -> "not published"))
          .isInstanceOf(TimeoutException.class);
    } finally {
      otherInstance.release();
    }
  }

  /** A service's Spring configuration: the registry, and a leader election that uses it. */
  @Configuration(proxyBeanMethods = false)
  static class BillingConfiguration {
    // docs/spring.md: beans
    // import org.springframework.context.annotation.Bean;
    // import org.springframework.integration.leader.DefaultCandidate;
    // import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

    @Bean
    LockstepLockRegistry lockRegistry(CuratorFramework client) {
      return new LockstepLockRegistry(client, "/locks/leaders");
    }

    @Bean
    LockRegistryLeaderInitiator leaderInitiator(LockstepLockRegistry lockRegistry) {
      return new LockRegistryLeaderInitiator(lockRegistry, new DefaultCandidate("a", "billing"));
    }
    // docs: end
  }

  @Test
  void spring_beans_electALeaderWhileTheContextRuns_andLeaveNothingOnceClosed() throws Exception {
    CuratorFramework client = zk.newClient();
    LockRegistryLeaderInitiator initiator;
    try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
      context.registerBean(CuratorFramework.class, () -> client);
      context.register(BillingConfiguration.class);
      context.refresh();
      initiator = context.getBean(LockRegistryLeaderInitiator.class);

      await("the only candidate leads").until(() -> initiator.getContext().isLeader());
      assertThat(new LockInspector(client).inspect("/locks/leaders/billing").holders()).hasSize(1);
    }
    assertThat(initiator.isRunning()).isFalse();
    zk.assertNothingLeft();
  }

  /** A service's fenced leader election, as a bean whose lifecycle is the context's. */
  @Configuration(proxyBeanMethods = false)
  static class BillingLeaderConfiguration {
    // docs/spring.md: leader election bean
    // import io.lockstep.recipes.leader.LeaderElection;
    // import org.springframework.context.annotation.Bean;

    @Bean(initMethod = "start", destroyMethod = "close")
    LeaderElection billingLeader(CuratorFramework client) {
      return LeaderElection.builder(client, "/services/billing/leader").build();
    }

    @Bean
    BillingRun billingRun(LeaderElection billingLeader, FencedStore store) {
      return new BillingRun(billingLeader, store);
    }
    // docs: end
  }

  // docs/spring.md: leader-only work
  // import io.lockstep.recipes.leader.Leadership;
  // import io.lockstep.recipes.locks.LockOwnershipLostException;
  // import java.util.Optional;

  static final class BillingRun {
    private final LeaderElection leader;
    private final FencedStore store;

    BillingRun(LeaderElection leader, FencedStore store) {
      this.leader = leader;
      this.store = store;
    }

    // Called on every instance (from a scheduler, say): only the leader runs, fenced by its epoch.
    boolean runIfLeader() {
      Optional<Leadership> leadership = leader.leadership();
      if (leadership.isEmpty() || !leader.isLeader()) {
        return false; // another instance leads, or this one's leadership is at risk
      }
      try {
        store.write("billing-run", "started", leadership.get().fencingToken());
        return true;
      } catch (LockOwnershipLostException lost) {
        return false; // the leadership ended meanwhile: the next leader runs
      }
    }
  }

  // docs: end

  @Test
  void spring_leaderElectionBean_oneInstanceRuns_andTheNextTakesOverWhenItStops() {
    FencedStore store = new FencedStore();
    AnnotationConfigApplicationContext first = instance(BillingLeaderConfiguration.class, store);
    BillingRun firstRun = first.getBean(BillingRun.class);
    await("the only instance leads").until(firstRun::runIfLeader);
    try (AnnotationConfigApplicationContext second =
        instance(BillingLeaderConfiguration.class, store)) {
      BillingRun secondRun = second.getBean(BillingRun.class);
      assertThat(secondRun.runIfLeader()).isFalse();
      long firstEpoch =
          first.getBean(LeaderElection.class).leadership().orElseThrow().fencingToken();

      first.close(); // the bean's close leaves the election

      await("the other instance leads").until(secondRun::runIfLeader);
      assertThat(second.getBean(LeaderElection.class).leadership().orElseThrow().fencingToken())
          .isGreaterThan(firstEpoch);
      assertThatThrownBy(() -> store.write("billing-run", "late", firstEpoch))
          .as("the old leader's epoch is refused")
          .isInstanceOf(IllegalStateException.class);
    }
    zk.assertNothingLeft();
  }

  /** A downstream bounded across instances, as a bean. */
  @Configuration(proxyBeanMethods = false)
  static class RatesConfiguration {
    // docs/spring.md: semaphore bean
    // import io.lockstep.recipes.locks.CountingSemaphore;

    @Bean
    CountingSemaphore ratesApiCalls(CuratorFramework client) {
      // at most 8 calls to the rates API at once, across every instance
      return new CountingSemaphore(client, "/semaphores/rates-api", 8);
    }
    // docs: end
  }

  // docs/spring.md: bounded calls
  // import io.lockstep.recipes.locks.LockHold;
  // import java.time.Duration;
  // import java.util.function.Function;

  static final class RatesClient {
    private final CountingSemaphore calls;
    private final Function<String, String> ratesApi; // the downstream call

    RatesClient(CountingSemaphore calls, Function<String, String> ratesApi) {
      this.calls = calls;
      this.ratesApi = ratesApi;
    }

    String quote(String currency) throws InterruptedException {
      Optional<LockHold> lease = calls.tryHold(Duration.ofSeconds(5));
      if (lease.isEmpty()) {
        throw new IllegalStateException("rates API busy: 8 calls in flight across the instances");
      }
      try (LockHold hold = lease.get()) {
        return ratesApi.apply(currency);
      }
    }
  }

  // docs: end

  @Test
  void spring_semaphoreBean_boundsTheCallsOfTwoInstances() throws Exception {
    AtomicInteger inFlight = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    CountDownLatch answer = new CountDownLatch(1);
    Function<String, String> ratesApi =
        currency -> {
          most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
          try {
            answer.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          inFlight.decrementAndGet();
          return "1.08 " + currency;
        };
    ExecutorService callers = Executors.newFixedThreadPool(10);
    try (AnnotationConfigApplicationContext a = instance(RatesConfiguration.class, null);
        AnnotationConfigApplicationContext b = instance(RatesConfiguration.class, null)) {
      RatesClient onA = new RatesClient(a.getBean(CountingSemaphore.class), ratesApi);
      RatesClient onB = new RatesClient(b.getBean(CountingSemaphore.class), ratesApi);
      List<CompletableFuture<String>> quotes = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        RatesClient client = i % 2 == 0 ? onA : onB;
        quotes.add(CompletableFuture.supplyAsync(() -> quote(client), callers));
      }
      await("8 calls run, 2 wait for a lease").until(() -> inFlight.get() == 8);
      answer.countDown();

      for (CompletableFuture<String> quote : quotes) {
        assertThat(quote.get(10, TimeUnit.SECONDS)).isEqualTo("1.08 EUR");
      }
      assertThat(most.get()).isEqualTo(8);
    } finally {
      callers.shutdownNow();
    }
  }

  private static String quote(RatesClient client) {
    try {
      return client.quote("EUR");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** One instance of a service: its own client, and the store the instances share. */
  private static AnnotationConfigApplicationContext instance(
      Class<?> configuration, FencedStore store) {
    AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
    CuratorFramework client = zk.newClient();
    context.registerBean(CuratorFramework.class, () -> client);
    if (store != null) {
      context.registerBean(FencedStore.class, () -> store);
    }
    context.register(configuration);
    context.refresh();
    return context;
  }

  // ---- docs/metrics.md ----

  @Test
  void metrics_bind_countsEveryLockOfTheClient() throws Exception {
    // docs/metrics.md: bind
    // import io.lockstep.recipes.micrometer.LockstepMetrics;
    // import io.micrometer.core.instrument.MeterRegistry;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient(); // docs: ... a started client
    MeterRegistry meterRegistry = new SimpleMeterRegistry(); // docs: ... your registry
    new LockstepMetrics(client).bindTo(meterRegistry);
    // docs: end
    ReentrantMutex lock = new ReentrantMutex(client, "/locks/orders");
    lock.acquire();
    lock.release();

    await()
        .until(
            () ->
                meterRegistry.find(LockstepMetrics.HELD).timer() != null
                    && meterRegistry.get(LockstepMetrics.HELD).timer().count() == 1);
    assertThat(
            meterRegistry
                .get("lockstep.lock.acquire")
                .tags("recipe", "ReentrantMutex", "outcome", "GRANTED")
                .timer()
                .count())
        .isEqualTo(1);
  }

  @Test
  void metrics_tagPaths_tellsTheNamedLocksApart() throws Exception {
    CuratorFramework client = zk.newClient();
    MeterRegistry meterRegistry = new SimpleMeterRegistry();
    // docs/metrics.md: tag paths
    // import java.util.Set;

    LockstepMetrics.builder(client)
        .tagPaths(Set.of("/locks/billing", "/locks/daily-report"))
        .build()
        .bindTo(meterRegistry);
    // docs: end
    try (LockHold hold = new ReentrantMutex(client, "/locks/billing").hold()) {
      await()
          .until(
              () ->
                  meterRegistry
                          .get("lockstep.lock.holders")
                          .tag("path", "/locks/billing")
                          .gauge()
                          .value()
                      == 1);
    }
    try (LockHold hold = new ReentrantMutex(client, "/locks/orders/17").hold()) {
      await()
          .until(
              () ->
                  meterRegistry.get("lockstep.lock.holders").tag("path", "other").gauge().value()
                      == 1);
    }
    assertThat(meterRegistry.get("lockstep.lock.holders").gauges()).hasSize(3);
  }

  @Test
  void metrics_flightRecording_holdsTheEvents(@TempDir Path dir) throws Exception {
    CuratorFramework client = zk.newClient();
    Path file = dir.resolve("locks.jfr");
    ReentrantMutex lock = new ReentrantMutex(client, "/locks/orders");
    try (Recording recording = new Recording(jdk.jfr.Configuration.getConfiguration("default"))) {
      recording.start(); // as -XX:StartFlightRecording does, with the JDK's default settings
      lock.acquire();
      lock.release();
      recording.stop();
      recording.dump(file);
    }
    // docs/metrics.md: read a recording
    // import java.nio.file.Path;
    // import java.util.ArrayList;
    // import java.util.List;
    // import jdk.jfr.consumer.RecordedEvent;
    // import jdk.jfr.consumer.RecordingFile;

    Path recording = file; // docs: ... a recording, from -XX:StartFlightRecording:filename=...
    List<String> acquires = new ArrayList<>();
    for (RecordedEvent event : RecordingFile.readAllEvents(recording)) {
      if (event.getEventType().getName().equals("io.lockstep.LockAcquire")) {
        acquires.add(
            event.getString("path")
                + " "
                + event.getString("outcome")
                + " after "
                + event.getDuration().toMillis()
                + " ms, token "
                + event.getLong("fencingToken"));
      }
    }
    // docs: end
    assertThat(acquires).singleElement().asString().startsWith("/locks/orders GRANTED after ");
    assertThat(RecordingFile.readAllEvents(file))
        .as("a recording with the JDK's default settings has the hold too")
        .filteredOn(event -> event.getEventType().getName().equals("io.lockstep.LockHold"))
        .singleElement()
        .satisfies(event -> assertThat(event.getString("path")).isEqualTo("/locks/orders"));
  }
}

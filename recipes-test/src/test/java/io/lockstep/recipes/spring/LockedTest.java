package io.lockstep.recipes.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.ZooKeeperExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@link Locked} methods in a real Spring context on a real server: exclusion per key, the key from
 * the arguments, the hold's token in the method, budgets, and what is left after failures.
 */
@Timeout(60)
class LockedTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private AnnotationConfigApplicationContext context;
  private LockstepLockRegistry registry;
  private Orders orders;

  /** A class-based (CGLIB) proxy: no interface (so the test reads its state through methods). */
  static class Orders {
    private final AtomicInteger calls = new AtomicInteger();
    private final ConcurrentHashMap<String, AtomicInteger> inside = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, AtomicInteger> most = new ConcurrentHashMap<>();

    public int calls() {
      return calls.get();
    }

    /** The most calls of {@code key} that were inside the method at once. */
    public int most(String key) {
      return most.get(key).get();
    }

    @Locked(key = "#orderId")
    public long work(String orderId, Runnable body) {
      calls.incrementAndGet();
      AtomicInteger now = inside.computeIfAbsent(orderId, k -> new AtomicInteger());
      most.computeIfAbsent(orderId, k -> new AtomicInteger())
          .accumulateAndGet(now.incrementAndGet(), Math::max);
      try {
        body.run();
        return LockedCall.current().fencingToken();
      } finally {
        now.decrementAndGet();
      }
    }

    @Locked(key = "'order-' + #order.id")
    public String ship(Order order) {
      calls.incrementAndGet();
      return LockedCall.current().path();
    }

    @Locked(key = "'order-' + #order.id", waitFor = "${test.orders.wait:PT2S}")
    public String shipWithin(Order order) {
      return ship(order); // a call to itself: no second lock
    }

    @Locked(key = "'report-' + #p0")
    public void fail(String name) {
      calls.incrementAndGet();
      throw new IllegalStateException("report " + name + " failed");
    }

    @Locked(key = "#p0", registry = "noSuchBean")
    public void unknownRegistry(String orderId) {
      calls.incrementAndGet();
    }
  }

  record Order(String id) {}

  @Configuration(proxyBeanMethods = false)
  @EnableLockstepLocking
  static class Config {
    @Bean
    LockstepLockRegistry registry(CuratorFramework client) {
      return new LockstepLockRegistry(client, zk.path("locks"));
    }

    @Bean
    Orders orders() {
      return new Orders();
    }
  }

  @BeforeEach
  void start() {
    CuratorFramework client = zk.newClient();
    context = new AnnotationConfigApplicationContext();
    context.registerBean(CuratorFramework.class, () -> client);
    context.register(Config.class);
    context.refresh();
    registry = context.getBean(LockstepLockRegistry.class);
    orders = context.getBean(Orders.class);
  }

  @AfterEach
  void stop() {
    context.close();
  }

  @Test
  void aBeanWithoutInterfaces_getsAClassBasedProxy() {
    assertThat(AopUtils.isCglibProxy(orders)).isTrue();
  }

  @Test
  void sameKey_neverOverlaps_differentKeysRunAtOnce() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<CompletableFuture<Long>> runs = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        runs.add(CompletableFuture.supplyAsync(() -> orders.work("order-1", Thread::yield), pool));
      }
      for (CompletableFuture<Long> run : runs) {
        run.get(30, TimeUnit.SECONDS);
      }
      assertThat(orders.most("order-1")).isEqualTo(1);
      assertThat(orders.calls()).isEqualTo(40);

      CountDownLatch bothInside = new CountDownLatch(2);
      Runnable meet =
          () -> {
            bothInside.countDown();
            await("the other key's call is inside too").until(() -> bothInside.getCount() == 0);
          };
      CompletableFuture<Long> a = CompletableFuture.supplyAsync(() -> orders.work("a", meet), pool);
      CompletableFuture<Long> b = CompletableFuture.supplyAsync(() -> orders.work("b", meet), pool);
      assertThat(a.get(30, TimeUnit.SECONDS)).isPositive();
      assertThat(b.get(30, TimeUnit.SECONDS)).isPositive();
    } finally {
      pool.shutdownNow();
    }
    assertThat(registry.obtain("order-1").fencedLock().getParticipantNodes()).isEmpty();
  }

  @Test
  void theKey_comesFromTheArguments_andTheTokenIncreasesAcrossCalls() {
    assertThat(orders.ship(new Order("17"))).isEqualTo(zk.path("locks") + "/order-17");

    long first = orders.work("order-17", () -> {});
    long second = orders.work("order-17", () -> {});

    assertThat(second).isGreaterThan(first);
    assertThatThrownBy(LockedCall::current)
        .as("outside a @Locked call")
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("No @Locked call");
  }

  @Test
  void whenTheWaitRunsOut_theMethodIsNotCalled_andNoNodeIsLeft() throws Exception {
    ReentrantMutex otherInstance = new ReentrantMutex(zk.newClient(), zk.path("locks/order-9"));
    otherInstance.acquire();
    try {
      assertThatThrownBy(() -> orders.shipWithin(new Order("9")))
          .isInstanceOf(LockTimeoutException.class)
          .hasMessageContaining("Orders.shipWithin")
          .hasMessageContaining("'order-9'")
          .hasMessageContaining("PT2S");
      assertThat(orders.calls()).isEqualTo(0);
      assertThat(otherInstance.getParticipantNodes()).hasSize(1);
    } finally {
      otherInstance.release();
    }
    assertThat(orders.shipWithin(new Order("9"))).endsWith("/order-9");
  }

  @Test
  void anExceptionInTheMethod_releasesTheLock() {
    assertThatThrownBy(() -> orders.fail("daily"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("report daily failed");

    assertThat(registry.obtain("report-daily").fencedLock().getParticipantNodes()).isEmpty();
    assertThatThrownBy(() -> orders.fail("daily")).hasMessage("report daily failed");
    assertThat(orders.calls()).isEqualTo(2);
  }

  @Test
  void aKeyThatDoesNotEvaluate_orAMissingRegistry_failsNamingTheMethod_withoutCallingIt() {
    assertThatThrownBy(() -> orders.work(null, () -> {}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Orders.work")
        .hasMessageContaining("\"#orderId\"")
        .hasMessageContaining("null");
    assertThatThrownBy(() -> orders.ship(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Orders.ship")
        .hasMessageContaining("cannot be evaluated");
    assertThatThrownBy(() -> orders.work("a//b", () -> {}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Orders.work")
        .hasMessageContaining("'a//b'");
    assertThatThrownBy(() -> orders.unknownRegistry("order-1"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("Orders.unknownRegistry")
        .hasMessageContaining("'noSuchBean'");
    assertThat(orders.calls()).isEqualTo(0);
  }

  @Test
  void theHold_isAHandle_closedWhenTheCallEnds() {
    AtomicInteger checked = new AtomicInteger();
    LockHold[] seen = new LockHold[1];
    orders.work(
        "order-3",
        () -> {
          seen[0] = LockedCall.current();
          seen[0].checkHeld();
          checked.incrementAndGet();
        });
    assertThat(checked).hasValue(1);
    assertThatThrownBy(seen[0]::checkHeld).isInstanceOf(IllegalStateException.class);
  }
}

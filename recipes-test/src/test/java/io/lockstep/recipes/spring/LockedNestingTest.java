package io.lockstep.recipes.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.recipes.locks.KeyedLocks;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockInspector;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.ZooKeeperExtension;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * Nested {@link Locked} calls, interface-based proxies, {@link KeyedLocks} as the lock source, and
 * a context whose lock source cannot be chosen.
 */
@Timeout(60)
class LockedNestingTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Annotated on the interface: the bean gets an interface-based proxy. */
  interface Ledger {
    @Locked(key = "#account", registry = "accounts")
    List<Long> post(String account, Runnable inside);
  }

  static final class LedgerImpl implements Ledger {
    @Override
    public List<Long> post(String account, Runnable inside) {
      inside.run();
      return List.of(LockedCall.current().fencingToken());
    }
  }

  /** Calls the ledger from inside its own locked call. */
  static class Transfers {
    private final Ledger ledger;
    private final List<String> seen = new CopyOnWriteArrayList<>();

    Transfers(Ledger ledger) {
      this.ledger = ledger;
    }

    @Locked(key = "#from", registry = "accounts")
    public void transfer(String from, String to) {
      LockHold outer = LockedCall.current();
      long sameKey = ledger.post(from, () -> {}).get(0);
      seen.add(sameKey == outer.fencingToken() ? "same key: outer hold" : "same key: new hold");
      ledger.post(
          to,
          () -> {
            LockHold inner = LockedCall.current();
            seen.add(inner == outer ? "other key: outer hold" : "other key: own hold");
            seen.add("holders of " + to + ": " + holders(inner.path()));
          });
      seen.add(LockedCall.current() == outer ? "after: outer hold again" : "after: other");
      outer.checkHeld();
    }

    public List<String> seen() {
      return seen;
    }

    private int holders(String path) {
      return new LockInspector(zk.newClient()).inspect(path).holders().size();
    }
  }

  /** Two lock sources: a {@code @Locked} method must name the one it uses. */
  @Configuration(proxyBeanMethods = false)
  @EnableLockstepLocking
  static class Sources {
    @Bean
    KeyedLocks accounts(CuratorFramework client) {
      return new KeyedLocks(client, zk.path("accounts"));
    }

    @Bean
    LockstepLockRegistry registry(CuratorFramework client) {
      return new LockstepLockRegistry(client, zk.path("registry"));
    }
  }

  @Configuration(proxyBeanMethods = false)
  @Import(Sources.class)
  static class Config {
    @Bean
    Ledger ledger() {
      return new LedgerImpl();
    }

    @Bean
    Transfers transfers(Ledger ledger) {
      return new Transfers(ledger);
    }
  }

  @Test
  void nestedCalls_reuseTheHoldOfTheSameLock_andTakeTheirOwnForAnother() {
    try (AnnotationConfigApplicationContext context = context(Config.class)) {
      Transfers transfers = context.getBean(Transfers.class);
      Ledger ledger = context.getBean(Ledger.class);
      assertThat(AopUtils.isJdkDynamicProxy(ledger)).isTrue();

      transfers.transfer("alice", "bob");

      assertThat(transfers.seen())
          .containsExactly(
              "same key: outer hold",
              "other key: own hold",
              "holders of bob: 1",
              "after: outer hold again");
      KeyedLocks accounts = context.getBean(KeyedLocks.class);
      assertThat(accounts.mutex("alice").getParticipantNodes()).isEmpty();
      assertThat(accounts.mutex("bob").getParticipantNodes()).isEmpty();
      assertThat(ledger.post("bob", () -> {}).get(0)).isPositive();
    }
  }

  static class Unnamed {
    @Locked(key = "#p0")
    public void run(String key) {}
  }

  @Configuration(proxyBeanMethods = false)
  @Import(Sources.class)
  static class TwoSources {
    @Bean
    Unnamed unnamed() {
      return new Unnamed();
    }
  }

  @Test
  void withTwoLockSources_anUnnamedOne_failsNamingTheMethod() {
    try (AnnotationConfigApplicationContext context = context(TwoSources.class)) {
      assertThatThrownBy(() -> context.getBean(Unnamed.class).run("a"))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("Unnamed.run")
          .hasMessageContaining("registry = ");
    }
  }

  private static AnnotationConfigApplicationContext context(Class<?> configuration) {
    CuratorFramework client = zk.newClient();
    AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
    context.registerBean(CuratorFramework.class, () -> client);
    context.register(configuration);
    context.refresh();
    return context;
  }

  /** A job whose locked step runs nested in its own locked run, once the run's hold was lost. */
  static class Job {
    private final List<String> ran = new CopyOnWriteArrayList<>();
    private Job self;

    public void self(Job proxy) {
      this.self = proxy;
    }

    public List<String> ran() {
      return ran;
    }

    @Locked(key = "'job'", registry = "registry", ttl = "PT0.3S")
    public void run() {
      LockHold hold = LockedCall.current();
      org.awaitility.Awaitility.await().until(() -> hold.state() == LockState.LOST);
      self.step();
    }

    @Locked(key = "'job'", registry = "registry")
    public void step() {
      ran.add("step");
    }
  }

  @Configuration(proxyBeanMethods = false)
  @Import(Sources.class)
  static class JobConfig {
    @Bean
    Job job() {
      return new Job();
    }
  }

  @Test
  void aNestedCall_whoseOuterHoldWasLost_throws_andDoesNotRun() {
    try (AnnotationConfigApplicationContext context = context(JobConfig.class)) {
      Job job = context.getBean(Job.class);
      job.self(job);

      assertThatThrownBy(job::run).isInstanceOf(LockOwnershipLostException.class);

      assertThat(job.ran()).as("the nested step, run without the lock").isEmpty();
    }
  }
}

package io.lockstep.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.docs.DocsExamplesTest.FencedStore;
import io.lockstep.recipes.spring.EnableLockstepLocking;
import io.lockstep.recipes.spring.Locked;
import io.lockstep.recipes.spring.LockedBeanPostProcessor;
import io.lockstep.recipes.spring.LockedCall;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testing.ZooKeeperExtension;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import org.springframework.stereotype.Service;

/** The {@code @Locked} examples of {@code docs/spring.md}, run in a Spring context. */
@Timeout(60)
class LockedDocsExamplesTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  // docs/spring.md: enable locked methods
  // import io.lockstep.recipes.spring.EnableLockstepLocking;
  // import io.lockstep.recipes.spring.LockstepLockRegistry;
  // import org.springframework.context.annotation.Bean;
  // import org.springframework.context.annotation.Configuration;

  @Configuration
  @EnableLockstepLocking
  static class LockingConfiguration {
    @Bean
    LockstepLockRegistry lockRegistry(CuratorFramework client) {
      return new LockstepLockRegistry(client, "/locks");
    }
  }

  // docs: end

  // docs/spring.md: a locked method
  // import io.lockstep.recipes.spring.Locked;
  // import io.lockstep.recipes.spring.LockedCall;
  // import org.springframework.stereotype.Service;

  @Service
  static class Shipping {
    private final FencedStore store; // refuses stale tokens, see getting-started.md

    Shipping(FencedStore store) {
      this.store = store;
    }

    @Locked(key = "'orders/' + #orderId", waitFor = "PT5S")
    public void ship(String orderId) {
      store.write(orderId, "shipped", LockedCall.current().fencingToken());
    }
  }

  // docs: end

  // docs/spring.md: scheduled jobs
  // import io.lockstep.recipes.spring.Locked;
  // import org.springframework.scheduling.annotation.Scheduled;
  // import org.springframework.stereotype.Component;

  @Component
  static class InvoiceRun {
    private final FencedStore store; // refuses stale tokens, see getting-started.md

    InvoiceRun(FencedStore store) {
      this.store = store;
    }

    // Every instance fires it; the first to take the lock runs it, the others skip this period.
    @Scheduled(cron = "0 */15 * * * *")
    @Locked(
        key = "'jobs/invoice-run'",
        whenBusy = Locked.WhenBusy.SKIP,
        ttl = "PT10M",
        holdAtLeast = "PT30S")
    public void run() {
      store.write("invoice-run", "done", LockedCall.current().fencingToken());
    }
  }

  // docs: end

  @Configuration
  @EnableScheduling
  static class SchedulingConfiguration {}

  @Test
  void scheduledJob_runsOnOneInstancePerPeriod_theOtherSkips_untilTheContextCloses()
      throws Exception {
    FencedStore store = new FencedStore();
    try (AnnotationConfigApplicationContext first = instance(store);
        AnnotationConfigApplicationContext second = instance(store)) {
      // The period's first firing runs and holds 30 s (a call that gets no answer within 200 ms
      // skips too, which a starved test machine may see: call until it ran).
      await()
          .until(
              () -> {
                first.getBean(InvoiceRun.class).run();
                return "done".equals(store.read("invoice-run"));
              });
      second.getBean(InvoiceRun.class).run(); // the same period on the other instance: skipped

      assertThat(second.getBean(LockedBeanPostProcessor.class).skips().count("InvoiceRun.run"))
          .isEqualTo(1);
      LockstepLockRegistry registry = second.getBean(LockstepLockRegistry.class);
      assertThat(registry.obtain("jobs/invoice-run").fencedLock().getParticipantNodes())
          .as("kept for holdAtLeast")
          .hasSize(1);

      first.close(); // releases the kept hold at once
      assertThat(registry.obtain("jobs/invoice-run").fencedLock().getParticipantNodes()).isEmpty();
    }
  }

  private static AnnotationConfigApplicationContext instance(FencedStore store) {
    CuratorFramework client = zk.newClient();
    AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
    context.registerBean(CuratorFramework.class, () -> client);
    context.registerBean(FencedStore.class, () -> store);
    context.register(SchedulingConfiguration.class, LockingConfiguration.class, InvoiceRun.class);
    context.refresh();
    return context;
  }

  @Test
  void lockedMethod_runsUnderTheKeysLock_andWritesWithItsToken() throws Exception {
    FencedStore store = new FencedStore();
    CuratorFramework client = zk.newClient();
    try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
      context.registerBean(CuratorFramework.class, () -> client);
      context.registerBean(FencedStore.class, () -> store);
      context.register(LockingConfiguration.class, Shipping.class);
      context.refresh();
      Shipping shipping = context.getBean(Shipping.class);

      shipping.ship("17");

      assertThat(store.read("17")).isEqualTo("shipped");
      assertThat(
              context
                  .getBean(LockstepLockRegistry.class)
                  .obtain("orders/17")
                  .fencedLock()
                  .getParticipantNodes())
          .isEmpty();
    }
  }
}

package io.lockstep.recipes.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.boot.LocksEndpoint;
import io.lockstep.recipes.boot.LockstepRegistryExpiry;
import io.lockstep.recipes.micrometer.LockstepMetrics;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testing.ZooKeeperExtension;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.actuate.endpoint.IndicatedHealthDescriptor;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A real Spring Boot application started with {@link SpringApplication}: Lockstep's
 * auto-configuration is found on the class path (its {@code AutoConfiguration.imports}), the
 * application locks and unlocks through the registry, Boot's meter registry has the lock meters,
 * Boot's health endpoint reports the {@code lockstep} component, and closing the application closes
 * the client.
 */
@Timeout(60)
class BillingApplicationTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void theApplication_locksThroughTheAutoConfiguredRegistry_andReportsItsHealth() throws Exception {
    String root = zk.path("billing");
    SpringApplication application = new SpringApplication(BillingApplication.class);
    application.setWebApplicationType(WebApplicationType.NONE);
    CuratorFramework client;
    try (ConfigurableApplicationContext context =
        application.run(
            "--lockstep.zookeeper.connect-string=" + zk.server().getConnectString(),
            "--lockstep.zookeeper.startup-wait=10s",
            "--lockstep.registry.root=" + root,
            "--management.endpoints.web.exposure.include=health,locks",
            "--management.endpoint.health.show-details=always")) {
      client = context.getBean(CuratorFramework.class);
      assertThat(context.getBean(LockstepLockRegistry.class).pathOf("accounts/7"))
          .isEqualTo(root + "/accounts/7");
      assertThat(context.getBean(LockstepRegistryExpiry.class).isScheduled()).isTrue();
      assertThat(context.getBeansOfType(LocksEndpoint.class)).hasSize(1);

      BillingApplication.Billing billing = context.getBean(BillingApplication.Billing.class);
      billing.bill("7");
      billing.bill("8");
      assertThat(billing.billed()).containsExactly("7", "8");
      CuratorFramework observer = zk.newClient();
      String lockPath = root + "/accounts/7";
      assertThat(ZooKeeperExtension.childrenOrNone(observer, lockPath).isEmpty())
          .as("the lock node, deleted at unlock (the empty directory may be reaped already)")
          .isTrue();

      MeterRegistry meters = context.getBean(MeterRegistry.class);
      await("Boot's meter registry counts the two grants")
          .untilAsserted(
              () ->
                  assertThat(
                          meters
                              .get(LockstepMetrics.ACQUIRE)
                              .tag("outcome", "GRANTED")
                              .timer()
                              .count())
                      .isEqualTo(2));

      HealthEndpoint health = context.getBean(HealthEndpoint.class);
      assertThat(health.healthForPath("lockstep"))
          .isInstanceOfSatisfying(
              IndicatedHealthDescriptor.class,
              lockstep -> {
                assertThat(lockstep.getStatus()).isEqualTo(Status.UP);
                assertThat(lockstep.getDetails()).containsEntry("holdsLost", 0L);
              });
    }
    assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STOPPED);
  }
}

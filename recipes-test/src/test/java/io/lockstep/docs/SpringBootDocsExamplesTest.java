package io.lockstep.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.docs.DocsExamplesTest.FencedStore;
import io.lockstep.recipes.boot.BootContexts;
import io.lockstep.recipes.boot.LockstepZookeeperAutoConfiguration;
import io.lockstep.recipes.micrometer.LockstepMetrics;
import io.lockstep.recipes.spring.LockstepLock;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testing.ZooKeeperExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The examples of {@code docs/spring-boot.md}, run on a real server with Lockstep's
 * auto-configuration, and its properties table checked against the jar's configuration metadata.
 */
@Timeout(60)
class SpringBootDocsExamplesTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private ApplicationContextRunner runner() {
    return BootContexts.runner(zk.server().getConnectString());
  }

  // docs/spring-boot.md: service
  // import io.lockstep.recipes.spring.LockstepLock;
  // import io.lockstep.recipes.spring.LockstepLockRegistry;

  static final class Invoices {
    private final LockstepLockRegistry locks; // the auto-configured registry, injected
    private final FencedStore store;

    Invoices(LockstepLockRegistry locks, FencedStore store) {
      this.locks = locks;
      this.store = store;
    }

    void pay(String invoice) {
      LockstepLock lock = locks.obtain("invoices/" + invoice);
      lock.lock();
      try {
        store.write("invoices/" + invoice, "paid", lock.fencingToken());
      } finally {
        lock.unlock();
      }
    }
  }

  // docs: end

  @Test
  void springBoot_service_locksThroughTheAutoConfiguredRegistry() {
    runner()
        .withPropertyValues("lockstep.registry.root=" + zk.path("locks"))
        .withBean(FencedStore.class, FencedStore::new)
        .withBean(Invoices.class)
        .run(
            context -> {
              context.getBean(Invoices.class).pay("17");
              assertThat(context.getBean(FencedStore.class).read("invoices/17")).isEqualTo("paid");
              assertThat(context.getBean(LockstepLockRegistry.class).pathOf("invoices/17"))
                  .isEqualTo(zk.path("locks") + "/invoices/17");
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnClientConfiguration {
    // docs/spring-boot.md: own client
    // import org.apache.curator.framework.CuratorFramework;
    // import org.apache.curator.framework.CuratorFrameworkFactory;
    // import org.apache.curator.retry.ExponentialBackoffRetry;
    // import org.springframework.beans.factory.annotation.Value;
    // import org.springframework.context.annotation.Bean;

    @Bean(initMethod = "start", destroyMethod = "close")
    CuratorFramework curatorFramework(@Value("${billing.zookeeper}") String connectString) {
      return CuratorFrameworkFactory.builder()
          .connectString(connectString)
          .retryPolicy(new ExponentialBackoffRetry(1000, 3))
          .namespace("billing")
          .build();
    }
    // docs: end
  }

  @Test
  void springBoot_ownClient_replacesTheAutoConfiguredOne_andTheRegistryUsesIt() {
    CuratorFramework observer = zk.newClient();
    runner()
        .withUserConfiguration(OwnClientConfiguration.class)
        .withPropertyValues(
            "billing.zookeeper=" + zk.server().getConnectString(),
            "lockstep.zookeeper.connect-string=127.0.0.1:1", // not used: the application's wins
            "lockstep.registry.root=" + zk.path("locks"))
        .run(
            context -> {
              assertThat(context).hasSingleBean(CuratorFramework.class);
              assertThat(context.getBean(CuratorFramework.class).getNamespace())
                  .isEqualTo("billing");
              LockstepLock lock = context.getBean(LockstepLockRegistry.class).obtain("report");
              lock.lock();
              try {
                assertThat(
                        observer.getChildren().forPath("/billing" + zk.path("locks") + "/report"))
                    .hasSize(1);
              } finally {
                lock.unlock();
              }
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class TaggedMetricsConfiguration {
    // docs/spring-boot.md: metrics
    // import io.lockstep.recipes.micrometer.LockstepMetrics;
    // import io.micrometer.core.instrument.MeterRegistry;
    // import java.util.Set;

    @Bean(destroyMethod = "close")
    LockstepMetrics lockstepMetrics(CuratorFramework client, MeterRegistry meterRegistry) {
      LockstepMetrics metrics =
          LockstepMetrics.builder(client).tagPaths(Set.of("/locks/daily-report")).build();
      metrics.bindTo(meterRegistry);
      return metrics;
    }
    // docs: end
  }

  @Test
  void springBoot_metrics_theApplicationsOwnBinder_tagsItsPaths() {
    runner()
        .withUserConfiguration(TaggedMetricsConfiguration.class)
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .run(
            context -> {
              assertThat(context).hasSingleBean(LockstepMetrics.class);
              MeterRegistry meters = context.getBean(MeterRegistry.class);
              assertThat(
                      meters
                          .find(LockstepMetrics.HOLDERS)
                          .tag("path", "/locks/daily-report")
                          .gauge())
                  .isNotNull();
            });
  }

  // ---- the properties table against the configuration metadata ----

  private static final Pattern ROW =
      Pattern.compile("^\\| `([\\w.-]+)` \\| ([^|]+) \\|", Pattern.MULTILINE);
  private static final Pattern PROPERTY =
      Pattern.compile(
          "\\{\\s*\"name\": \"([\\w.-]+)\",[^{}]*?(?:\"defaultValue\": (\"[^\"]*\"|[\\w.]+))?\\s*\\}",
          Pattern.DOTALL);

  @Test
  void springBoot_propertiesTable_listsEveryPropertyOfTheMetadata_withItsDefault()
      throws IOException {
    Map<String, String> metadata = metadataDefaults();
    assertThat(metadata)
        .as("the metadata has the registry's defaults")
        .containsEntry("lockstep.registry.root", LockstepLockRegistry.DEFAULT_ROOT)
        .containsEntry(
            "lockstep.registry.cache-capacity",
            String.valueOf(LockstepLockRegistry.DEFAULT_CACHE_CAPACITY))
        .containsKeys("lockstep.zookeeper.connect-string", "lockstep.inspector.roots");
    Map<String, String> table = new LinkedHashMap<>();
    Matcher row =
        ROW.matcher(
            Files.readString(DocsExamplesTest.repositoryRoot().resolve("docs/spring-boot.md")));
    while (row.find()) {
      table.put(row.group(1), row.group(2).strip());
    }
    List<String> problems = new ArrayList<>();
    for (Map.Entry<String, String> property : metadata.entrySet()) {
      String name = property.getKey();
      if (!table.containsKey(name)) {
        problems.add(name + " is not in the table");
      } else if (property.getValue() != null
          && !table.get(name).equals("`" + property.getValue() + "`")) {
        problems.add(
            name + ": the table says " + table.get(name) + ", the metadata " + property.getValue());
      }
    }
    for (String name : table.keySet()) {
      if (name.contains(".") && !metadata.containsKey(name)) {
        problems.add(name + " is in the table but no property");
      }
    }
    assertThat(problems).isEmpty();
  }

  /** Lockstep's properties in the metadata, with their defaults (null when none). */
  private static Map<String, String> metadataDefaults() throws IOException {
    String json;
    try (InputStream in =
        LockstepZookeeperAutoConfiguration.class
            .getClassLoader()
            .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("the configuration metadata on the class path").isNotNull();
      json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    String properties = json.substring(json.indexOf("\"properties\""));
    Map<String, String> defaults = new LinkedHashMap<>();
    Matcher property = PROPERTY.matcher(properties);
    while (property.find()) {
      String name = property.group(1);
      if (name.startsWith("lockstep.")
          || name.equals("management.health.lockstep.enabled")
          || name.equals("management.endpoint.locks.access")) {
        String value = property.group(2);
        defaults.put(name, value == null ? null : value.replace("\"", "").replace("\\/", "/"));
      }
    }
    assertThat(defaults.keySet())
        .as("the properties found")
        .hasSizeGreaterThan(15)
        .doesNotContainNull();
    return defaults;
  }
}

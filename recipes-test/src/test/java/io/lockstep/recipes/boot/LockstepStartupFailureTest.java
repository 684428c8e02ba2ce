package io.lockstep.recipes.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.URL;
import java.util.Enumeration;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * A Lockstep startup failure reads as Spring Boot's failure report (a description and an action,
 * not a stack trace five causes deep), and a mistyped {@code lockstep.*} key is named at startup.
 */
@Timeout(60)
class LockstepStartupFailureTest {
  @Test
  void theAnalyzer_isRegisteredWithSpringBoot() throws Exception {
    boolean registered = false;
    Enumeration<URL> files = getClass().getClassLoader().getResources("META-INF/spring.factories");
    while (files.hasMoreElements()) {
      Properties factories = new Properties();
      try (InputStream in = files.nextElement().openStream()) {
        factories.load(in);
      }
      String analyzers = factories.getProperty(FailureAnalyzer.class.getName(), "");
      registered |= analyzers.contains(LockstepFailureAnalyzer.class.getName());
    }
    assertThat(registered).isTrue();
  }

  @Test
  void aBlankConnectString_isReportedWithThePropertyToSet() {
    BootContexts.runner(" ")
        .run(
            context -> {
              assertThat(context).hasFailed();
              FailureAnalysis analysis =
                  new LockstepFailureAnalyzer().analyze(context.getStartupFailure());
              assertThat(analysis).isNotNull();
              assertThat(analysis.getDescription())
                  .contains("lockstep.zookeeper.connect-string must not be blank");
              assertThat(analysis.getAction()).contains("Set lockstep.zookeeper.connect-string");
              assertThat(analysis.getCause()).isInstanceOf(IllegalArgumentException.class);
            });
  }

  @Test
  void aServerNotReachedWithinTheStartupWait_isReportedWithWhatToCheck() {
    BootContexts.runner("127.0.0.1:1")
        .withPropertyValues("lockstep.zookeeper.startup-wait=500ms")
        .run(
            context -> {
              assertThat(context).hasFailed();
              FailureAnalysis analysis =
                  new LockstepFailureAnalyzer().analyze(context.getStartupFailure());
              assertThat(analysis).isNotNull();
              assertThat(analysis.getDescription())
                  .contains("ZooKeeper at 127.0.0.1:1 not reached")
                  .contains("startup-wait=PT0.5S");
              assertThat(analysis.getAction())
                  .contains("127.0.0.1:1")
                  .contains("lockstep.zookeeper.startup-wait=0");
              assertThat(analysis.getCause()).isInstanceOf(IllegalStateException.class);
            });
  }

  @Test
  void otherFailures_areLeftToTheOtherAnalyzers() {
    assertThat(new LockstepFailureAnalyzer().analyze(new IllegalStateException("not ours")))
        .isNull();
  }

  @Test
  void unknownKeys_areTheLockstepKeysNoPropertyHas_comparedAsBootBindsThem() {
    StandardEnvironment environment = new StandardEnvironment();
    environment
        .getPropertySources()
        .addFirst(
            new MapPropertySource(
                "application",
                Map.of(
                    "lockstep.zookeeper.connect", "zk:2181", // mistyped
                    "lockstep.zookeeper.connectString", "zk:2181", // relaxed form of a known key
                    "lockstep.zookeeper.retry.max-retries", "3", // nested
                    "lockstep.inspector.roots[0]", "/locks", // a list's element
                    "lockstep.registry.enabled", "true", // a switch
                    "lockstep.locked.default-ttl", "10m",
                    "lockstep.zookeper.connect-string", "zk:2181", // a mistyped group
                    "spring.application.name", "billing"))); // not ours

    assertThat(UnknownProperties.of(environment))
        .containsExactly("lockstep.zookeeper.connect", "lockstep.zookeper.connect-string");
  }
}

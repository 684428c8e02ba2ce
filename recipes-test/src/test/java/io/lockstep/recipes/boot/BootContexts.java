package io.lockstep.recipes.boot;

import java.util.HashSet;
import java.util.Set;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * What the auto-configuration tests (and the examples of docs/spring-boot.md) share: a context
 * runner with Lockstep's auto-configuration.
 */
public final class BootContexts {
  private BootContexts() {}

  /** A runner with every Lockstep auto-configuration, its client pointed at {@code connect}. */
  public static ApplicationContextRunner runner(String connectString) {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                LockstepZookeeperAutoConfiguration.class,
                LockstepRegistryAutoConfiguration.class,
                LockstepLockedAutoConfiguration.class,
                LockstepMetricsAutoConfiguration.class,
                LockstepObservationAutoConfiguration.class,
                LockstepHealthAutoConfiguration.class,
                LocksEndpointAutoConfiguration.class))
        .withPropertyValues(
            "lockstep.zookeeper.connect-string=" + connectString,
            "lockstep.zookeeper.connection-timeout=5s",
            "lockstep.zookeeper.retry.base-sleep=100ms");
  }

  /**
   * The live threads a Curator client and Lockstep's Boot beans start, by name: ZooKeeper's send
   * and event threads, Curator's executors, the registry's expiry.
   */
  static Set<Thread> clientThreads() {
    Set<Thread> threads = new HashSet<>();
    for (Thread thread : Thread.getAllStackTraces().keySet()) {
      String name = thread.getName();
      if (thread.isAlive()
          && (name.contains("-SendThread(")
              || name.endsWith("-EventThread")
              || name.startsWith("Curator-")
              || name.equals(LockstepRegistryExpiry.THREAD_NAME))) {
        threads.add(thread);
      }
    }
    return threads;
  }
}

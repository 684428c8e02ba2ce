package io.lockstep.recipes.boot;

import io.lockstep.recipes.spring.Locked;
import io.lockstep.recipes.spring.LockedBeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of {@link Locked @Locked} methods: registers the {@link
 * LockedBeanPostProcessor} that runs each annotated method of a bean under its key's lock, taken
 * from the application's {@code LockstepLockRegistry} (or {@code KeyedLocks}) bean. Needs Spring
 * Integration on the class path (the registry's home); a {@code @Locked} call without such a bean
 * throws {@link IllegalStateException} naming the method. It backs off when the application
 * registers the post processor itself ({@code @EnableLockstepLocking}), and when {@code
 * lockstep.locked.enabled} is {@code false}. A bean without {@code @Locked} methods is not proxied.
 * The post processor reads {@code lockstep.locked.default-ttl}, the time to live of the calls whose
 * annotation has none, from the environment (so does one that the application registers itself);
 * {@link LockstepMetricsAutoConfiguration} counts the skipped calls.
 */
@AutoConfiguration(after = LockstepRegistryAutoConfiguration.class)
@ConditionalOnClass(
    name = "org.springframework.integration.support.locks.LockRegistry",
    value = LockedBeanPostProcessor.class)
@ConditionalOnBooleanProperty(name = "lockstep.locked.enabled", matchIfMissing = true)
public final class LockstepLockedAutoConfiguration {
  /** Creates the configuration; Spring does. */
  public LockstepLockedAutoConfiguration() {}

  /**
   * The post processor of {@code @Locked} methods. Static, as every bean post processor's factory
   * method should be, so that it does not make this configuration an early bean.
   *
   * @return the post processor
   */
  @Bean
  @ConditionalOnMissingBean
  public static LockedBeanPostProcessor lockedBeanPostProcessor() {
    return new LockedBeanPostProcessor();
  }
}

package io.lockstep.recipes.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.Import;

/**
 * Enables {@link Locked} methods: put it on a {@code @Configuration} class to register a {@link
 * LockedBeanPostProcessor}, which proxies the beans that have such methods.
 *
 * <pre>{@code
 * import io.lockstep.recipes.spring.EnableLockstepLocking;
 * import io.lockstep.recipes.spring.LockstepLockRegistry;
 * import org.apache.curator.framework.CuratorFramework;
 * import org.springframework.context.annotation.Bean;
 * import org.springframework.context.annotation.Configuration;
 *
 * @Configuration
 * @EnableLockstepLocking
 * class LockingConfiguration {
 *   @Bean
 *   LockstepLockRegistry lockRegistry(CuratorFramework client) {
 *     return new LockstepLockRegistry(client, "/locks");
 *   }
 * }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Import(LockedBeanPostProcessor.class)
public @interface EnableLockstepLocking {}

package io.lockstep.recipes.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method of a Spring bean under the ZooKeeper lock of a key computed from its
 * arguments: the lock is taken before the call and released when the call returns or throws. Needs
 * {@link LockedBeanPostProcessor} in the context ({@link EnableLockstepLocking}).
 *
 * <pre>{@code
 * import io.lockstep.recipes.spring.Locked;
 * import io.lockstep.recipes.spring.LockedCall;
 * import org.springframework.stereotype.Service;
 *
 * @Service
 * class OrderService {
 *   private final FencedStore store; // refuses stale tokens (docs/getting-started.md)
 *
 *   OrderService(FencedStore store) {
 *     this.store = store;
 *   }
 *
 *   @Locked(key = "'orders/' + #orderId", waitFor = "PT5S")
 *   public void ship(String orderId) {
 *     store.write(orderId, "shipped", LockedCall.current().fencingToken());
 *   }
 * }
 * }</pre>
 *
 * <p><b>Held and owned.</b> The call takes a {@link io.lockstep.recipes.locks.LockHold} of the
 * key's lock ({@link io.lockstep.recipes.locks.FencedLock#hold()}): its own entry in the lock's
 * queue, whose fencing token the method reads through {@link LockedCall#current()}. The hold is
 * closed when the method returns or throws. A {@code @Locked} call inside another one on the same
 * thread and the same lock object (the same key of the same registry) runs under the outer call's
 * hold instead of queueing behind it; a different key takes its own hold, released when the inner
 * call ends.
 *
 * <p><b>Where the lock comes from.</b> The {@link #registry()} bean, or else the only {@link
 * LockstepLockRegistry} bean (its {@code obtain(key)}), or else the only {@link
 * io.lockstep.recipes.locks.KeyedLocks} bean (its {@code mutex(key)}).
 *
 * <p><b>Failures.</b> When {@link #waitFor()} runs out, the call throws {@link
 * LockTimeoutException} and the method is not called; when ZooKeeper cannot be reached, {@link
 * io.lockstep.recipes.locks.LockUnreachableException}; other ZooKeeper failures, and an interrupt
 * while waiting (the flag is set again), {@link io.lockstep.recipes.locks.LockException}. A key
 * expression that cannot be evaluated, or gives null or a key the lock source refuses, throws
 * {@link IllegalArgumentException}; a key expression that does not parse, a bad {@code waitFor}, a
 * missing lock bean or an asynchronous return type throw {@link IllegalStateException}; each
 * message names the method and the expression, and nothing is sent to ZooKeeper.
 *
 * <p><b>Limits.</b> Spring AOP proxies: a call from the bean to its own method bypasses the proxy
 * and takes no lock. Methods that return a {@code CompletionStage}, a {@code Future} or a reactive
 * type are refused: the lock would be released before their work ends. A distributed lock is not a
 * JVM mutex (see {@link io.lockstep.recipes.locks.FencedLock}): fence the writes that matter with
 * the hold's token.
 */
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Locked {
  /**
   * The lock key: a SpEL expression over the method's arguments, by name ({@code #orderId}, which
   * needs classes compiled with {@code -parameters}, as Spring Boot's build plugins do) or by
   * position ({@code #p0}, {@code #a0}), and over beans ({@code @beanName}). A literal key is
   * quoted: {@code "'daily-report'"}. A value that is not a {@code String} becomes its {@code
   * toString()}.
   *
   * @return the key expression
   */
  String key();

  /**
   * The longest time to wait for the lock, as an ISO-8601 duration ({@code "PT1S"}, {@code
   * "PT0.5S"}), or a property placeholder that resolves to one ({@code "${orders.lock-wait}"}). A
   * zero duration makes one attempt. Empty (the default) waits as long as it takes.
   *
   * @return the wait budget, or empty for no limit
   */
  String waitFor() default "";

  /**
   * The name of the bean the lock comes from, a {@link LockstepLockRegistry} or a {@link
   * io.lockstep.recipes.locks.KeyedLocks}; empty (the default) takes the only bean of either type.
   *
   * @return the bean name, or empty
   */
  String registry() default "";
}

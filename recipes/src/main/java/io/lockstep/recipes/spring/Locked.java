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
 * hold instead of queueing behind it (the outer call's time to live and {@code holdAtLeast} go on
 * applying; the inner call's {@code whenBusy}, {@code ttl}, {@code renew} and {@code holdAtLeast}
 * do not); a different key takes its own hold, released when the inner call ends.
 *
 * <p><b>Where the lock comes from.</b> The {@link #registry()} bean, or else the only {@link
 * LockstepLockRegistry} bean (its {@code obtain(key)}), or else the only {@link
 * io.lockstep.recipes.locks.KeyedLocks} bean (its {@code mutex(key)}).
 *
 * <p><b>Scheduled jobs.</b> On a {@code @Scheduled} method that runs on every instance of a
 * service, {@code whenBusy = WhenBusy.SKIP} makes the instances that find the lock held skip their
 * run quietly (counted in {@link LockedBeanPostProcessor#skips()}, logged at DEBUG), {@link
 * #holdAtLeast()} keeps the lock after a fast run so that an instance whose clock is a little
 * behind does not run the same period again, and {@link #ttl()} bounds how long a stuck run keeps
 * it:
 *
 * <pre>{@code
 * import io.lockstep.recipes.spring.Locked;
 * import org.springframework.scheduling.annotation.Scheduled;
 * import org.springframework.stereotype.Component;
 *
 * @Component
 * class DailyReport {
 *   @Scheduled(cron = "0 0 6 * * *")
 *   @Locked(key = "'jobs/daily-report'", whenBusy = Locked.WhenBusy.SKIP,
 *       ttl = "PT30M", holdAtLeast = "PT1M")
 *   public void publish() {
 *     // one instance of the service runs it each morning
 *   }
 * }
 * }</pre>
 *
 * <p><b>Time to live.</b> A {@link #ttl()} (or the {@link LockedBeanPostProcessor#setDefaultTtl
 * default}) fails safe, as {@link LockstepLock}'s does: when the hold outlives it while the method
 * still runs, its node is deleted and the hold turns {@link
 * io.lockstep.recipes.locks.LockState#LOST}, so another instance can take the lock, with a greater
 * fencing token, and the late one's token is refused. The method is not interrupted: it learns of
 * the loss through {@link LockedCall#current()} ({@code checkHeld()}, {@code fencingToken()},
 * {@code whenLost()}), and returns as usual. The deadline is kept in this process, on Lockstep's
 * scheduler; a process that dies loses its holds with its ZooKeeper session instead, whatever the
 * time to live. {@link LockedCall#renew()} moves the deadline to the time to live from now, a
 * heartbeat from the method; with {@link #renew()} Lockstep moves it itself while the hold's
 * connection is up.
 *
 * <p><b>Failures.</b> When {@link #waitFor()} runs out, the call throws {@link
 * LockTimeoutException} and the method is not called (with {@link WhenBusy#SKIP}, it returns
 * instead); when ZooKeeper cannot be reached, {@link
 * io.lockstep.recipes.locks.LockUnreachableException}; other ZooKeeper failures, and an interrupt
 * while waiting (the flag is set again), {@link io.lockstep.recipes.locks.LockException}. A key
 * expression that cannot be evaluated, or gives null or a key the lock source refuses, throws
 * {@link IllegalArgumentException}, and a missing lock bean {@link IllegalStateException}, at the
 * call. The annotation's own values are checked when the context starts: a key expression that does
 * not parse, a duration that does not parse or is out of range, a {@code holdAtLeast} longer than
 * the time to live, {@code renew} without a time to live, {@code SKIP} on a method that returns a
 * primitive value, or an asynchronous return type fail the bean's creation with an {@link
 * IllegalStateException}. Each message names the method and the attribute or expression, and
 * nothing is sent to ZooKeeper.
 *
 * <p><b>Limits.</b> Spring AOP proxies: a call from the bean to its own method bypasses the proxy
 * and takes no lock, and a {@code final} method of a class-based (CGLIB) proxy is refused at
 * startup, as its proxy cannot intercept it. Methods that return a {@code CompletionStage}, a
 * {@code Future} or a reactive type are refused: the lock would be released before their work ends.
 * A distributed lock is not a JVM mutex (see {@link io.lockstep.recipes.locks.FencedLock}): fence
 * the writes that matter with the hold's token.
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

  /**
   * What the call does when the lock is held elsewhere until {@link #waitFor()} runs out: {@link
   * WhenBusy#FAIL} (the default) throws {@link LockTimeoutException}; {@link WhenBusy#SKIP} returns
   * without calling the method. With {@code SKIP}, an empty {@code waitFor} makes one attempt
   * ({@code "PT0S"}) instead of waiting as long as it takes.
   *
   * @return what a busy lock does to the call
   */
  WhenBusy whenBusy() default WhenBusy.FAIL;

  /**
   * The longest time the call holds the lock, as an ISO-8601 duration ({@code "PT10M"}) or a
   * property placeholder that resolves to one: past it, the hold is given up as lost, its node
   * deleted, even if the method still runs (see the class comment). Positive. Empty (the default)
   * takes the {@link LockedBeanPostProcessor#setDefaultTtl default time to live}, and without one
   * the hold lasts until the call ends. ShedLock's {@code lockAtMostFor}.
   *
   * @return the time to live, or empty for the default
   */
  String ttl() default "";

  /**
   * Whether Lockstep renews the {@link #ttl()} while the method runs: every half time to live, a
   * hold found {@code HELD} gets its deadline moved to the time to live from then. So a running
   * call keeps its hold however long it runs, as long as its ZooKeeper connection is up; a hold cut
   * off from ZooKeeper (its connection suspended) is given up within a time to live of the
   * suspension (at least half of one), earlier than its session would be declared lost. Renewal
   * does not depend on the method making progress: a stuck method keeps the lock, as with
   * ShedLock's {@code KeepAliveLockProvider}; to bound a stuck method, leave this false and call
   * {@link LockedCall#renew()} at its progress points. Needs a time to live.
   *
   * @return true to renew while the method runs
   */
  boolean renew() default false;

  /**
   * The shortest time the lock is held, from its grant, as an ISO-8601 duration ({@code "PT30S"})
   * or a property placeholder that resolves to one: a call that ends sooner keeps the lock, and it
   * is released in the background once held that long (on Lockstep's scheduler: no thread per hold,
   * and the caller does not wait). Another instance of the service whose clock is a little behind
   * then finds it held and does not run the same scheduled period again. Not negative, and not
   * longer than the time to live. Kept holds are released at once when the context closes. Empty
   * (the default) releases the lock when the call ends. ShedLock's {@code lockAtLeastFor}.
   *
   * @return the shortest hold, or empty for none
   */
  String holdAtLeast() default "";

  /**
   * The resource fenced in the database, a SpEL expression over the arguments as {@link #key()}
   * ({@code "'order-' + #orderId"}; one resource per lock, so usually the key's own expression):
   * the call's fencing token is admitted for it through {@link io.lockstep.recipes.fence.JdbcFence}
   * (the context's bean of that type, or one on the context's {@code DataSource} and its default
   * table), in a transaction around the method that the method's own {@code @Transactional} work
   * and {@code JdbcTemplate} join, before any of their writes; a transaction already under way is
   * joined instead. A stale token (a newer holder was admitted) throws {@link
   * io.lockstep.recipes.fence.StaleFencingTokenException} and the method is not called; the
   * transaction commits when the method returns and rolls back when it throws anything. Needs
   * spring-jdbc and one {@code DataSource} in the context (and uses its {@code
   * PlatformTransactionManager}, or a {@code DataSourceTransactionManager} on it). Empty (the
   * default): no fence.
   *
   * @return the fenced resource's name, or empty for none
   */
  String fence() default "";

  /** What a {@link Locked} call does when another holder has the lock. */
  enum WhenBusy {
    /**
     * Throw {@link LockTimeoutException} once {@link Locked#waitFor()} runs out; the method is not
     * called.
     */
    FAIL,

    /**
     * Return without calling the method once {@link Locked#waitFor()} runs out (by default at
     * once): a {@code void} method just returns, one returning {@link java.util.Optional} returns
     * {@code Optional.empty()}, any other reference type {@code null}; a method returning a
     * primitive is refused. The skip is counted ({@link LockedBeanPostProcessor#skips()}) and
     * logged at DEBUG by the logger {@code io.lockstep.recipes.spring.Locked}, never as an error.
     * Busy means what it means for {@link #FAIL}: not granted within the budget, mostly because
     * another holder has the lock, also when the server does not answer the attempt's first try
     * within the grace every budget gets (200 ms). ZooKeeper unreachable is no skip: the call
     * throws {@link io.lockstep.recipes.locks.LockUnreachableException}.
     */
    SKIP
  }
}

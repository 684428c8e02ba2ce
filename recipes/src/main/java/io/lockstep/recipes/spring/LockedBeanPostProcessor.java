package io.lockstep.recipes.spring;

import java.time.DateTimeException;
import java.time.Duration;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ApplicationListener;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;
import org.springframework.format.datetime.standard.DurationFormatterUtils;

/**
 * Proxies the beans that have {@link Locked} methods, so that each such call runs under its key's
 * lock. Register it with {@link EnableLockstepLocking}, or as a bean of its own (a {@code static}
 * {@code @Bean} method, as for any bean post-processor):
 *
 * <pre>{@code
 * import io.lockstep.recipes.spring.LockedBeanPostProcessor;
 * import java.time.Duration;
 * import org.springframework.context.annotation.Bean;
 *
 * @Bean
 * static LockedBeanPostProcessor lockedBeanPostProcessor() {
 *   LockedBeanPostProcessor locked = new LockedBeanPostProcessor();
 *   locked.setDefaultTtl(Duration.ofMinutes(30)); // or lockstep.locked.default-ttl=30m
 *   return locked;
 * }
 * }</pre>
 *
 * <p>Spring AOP, no weaving: a bean that implements interfaces gets an interface-based proxy, any
 * other a class-based (CGLIB) one, unless {@link #setProxyTargetClass(boolean)} asks for the class
 * always. The annotation may sit on the class's method or on the interface's. A bean proxied
 * already (for {@code @Transactional}, say) gets the lock as its outermost advice: the lock is
 * taken before the transaction begins and released after it ends. It runs before the post-processor
 * of Spring's {@code @Scheduled} methods, so a scheduled {@code @Locked} method is called through
 * the proxy. The annotations of a bean's methods are checked as the bean is created: a bad value
 * fails the context's startup (see {@link Locked}).
 *
 * <p>It keeps what its calls share: the {@link #skips() count of skipped calls}, and the holds kept
 * for their {@link Locked#holdAtLeast()}, which it releases at once when its context closes (as the
 * close begins, before the beans are destroyed).
 */
public class LockedBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
    implements EnvironmentAware,
        ApplicationContextAware,
        ApplicationListener<ContextClosedEvent>,
        DisposableBean {
  private static final long serialVersionUID = 1L;

  /**
   * The property that sets the {@link #setDefaultTtl default time to live} of {@link Locked} calls,
   * read from the context's environment unless {@link #setDefaultTtl} was called: an ISO-8601
   * duration ({@code PT30M}) or Spring's simple form ({@code 30m}).
   */
  public static final String DEFAULT_TTL_PROPERTY = LockedDefaults.TTL_PROPERTY;

  private final transient LockedSkips skips = new LockedSkips();
  private transient volatile Duration defaultTtl; // null: none
  private transient volatile boolean defaultTtlSet; // by the setter: the property does not apply
  private transient volatile ApplicationContext context;
  private transient volatile LockedInterceptor interceptor; // set with the bean factory

  /** Creates the post-processor; it finds the lock beans once the context runs. */
  public LockedBeanPostProcessor() {
    setBeforeExistingAdvisors(true);
    // Before @Scheduled's post-processor (the lowest precedence), whatever the order the two were
    // registered in: the method it schedules is then the proxy's, which takes the lock.
    setOrder(Ordered.LOWEST_PRECEDENCE - 1);
  }

  /**
   * Sets the time to live of the holds of {@link Locked} calls whose annotation has no {@link
   * Locked#ttl()}; the {@link #DEFAULT_TTL_PROPERTY} is then not read. Set it before the context
   * starts: the methods of a bean take the default in force when the bean is created.
   *
   * @param ttl the default time to live, positive; or null for none (the hold lasts until the call
   *     ends)
   * @throws IllegalArgumentException if {@code ttl} is not positive
   */
  public void setDefaultTtl(Duration ttl) {
    this.defaultTtl = ttl == null ? null : LockstepLock.checkTtl(ttl);
    this.defaultTtlSet = true;
  }

  /**
   * The time to live of the holds of {@link Locked} calls whose annotation has none.
   *
   * @return the default time to live, or null for none
   */
  public Duration getDefaultTtl() {
    return defaultTtl;
  }

  /**
   * The calls skipped because another holder had the lock ({@link Locked.WhenBusy#SKIP}), counted
   * per method.
   *
   * @return the skips of this post-processor's calls
   */
  public LockedSkips skips() {
    return skips;
  }

  /**
   * Reads the {@link #DEFAULT_TTL_PROPERTY}, unless {@link #setDefaultTtl} was called.
   *
   * @param environment the context's environment
   * @throws IllegalStateException if the property is no positive duration, naming it
   */
  @Override
  public void setEnvironment(Environment environment) {
    String text = environment.getProperty(DEFAULT_TTL_PROPERTY);
    if (defaultTtlSet || text == null || text.isBlank()) {
      return;
    }
    try {
      this.defaultTtl = LockstepLock.checkTtl(DurationFormatterUtils.detectAndParse(text.strip()));
    } catch (IllegalArgumentException | DateTimeException e) {
      throw new IllegalStateException(
          DEFAULT_TTL_PROPERTY
              + " \""
              + text
              + "\" is no positive duration, such as \"PT30M\" or \"30m\": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Sets the context whose close releases the kept holds.
   *
   * @param applicationContext the context
   */
  @Override
  public void setApplicationContext(ApplicationContext applicationContext) {
    this.context = applicationContext;
  }

  /**
   * Sets the bean factory in which {@link Locked} methods find their lock beans.
   *
   * @param beanFactory the context's bean factory
   */
  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    super.setBeanFactory(beanFactory);
    LockedInterceptor locked =
        new LockedInterceptor(beanFactory, () -> new LockedDefaults(defaultTtl), skips);
    this.interceptor = locked;
    this.advisor =
        new DefaultPointcutAdvisor(
            new AnnotationMatchingPointcut(null, Locked.class, true), locked);
  }

  /**
   * Checks the {@link Locked} annotations of {@code bean}'s methods, then proxies it if it has any.
   *
   * @param bean the bean, initialized
   * @param beanName its name
   * @return the bean, or its proxy
   * @throws IllegalStateException if an annotation cannot be used, naming the method and the
   *     attribute
   */
  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    LockedInterceptor locked = interceptor;
    boolean eligible = locked != null && isEligible(bean, beanName);
    if (eligible) {
      locked.check(AopUtils.getTargetClass(bean));
    }
    Object proxied = super.postProcessAfterInitialization(bean, beanName);
    if (eligible && AopUtils.isCglibProxy(proxied)) {
      locked.checkOverridable(AopUtils.getTargetClass(bean));
    }
    return proxied;
  }

  /**
   * Releases the holds kept for their {@link Locked#holdAtLeast()} when this post-processor's
   * context closes (a child context's close is not this one's).
   *
   * @param event the close
   */
  @Override
  public void onApplicationEvent(ContextClosedEvent event) {
    if (event.getApplicationContext() == context) {
      releaseKeptHolds();
    }
  }

  /** Releases the kept holds, if the context's close event did not already. */
  @Override
  public void destroy() {
    releaseKeptHolds();
  }

  /** How many holds are kept past their call; for tests. */
  int keptHolds() {
    LockedInterceptor locked = interceptor;
    return locked == null ? 0 : locked.keptHolds();
  }

  private void releaseKeptHolds() {
    LockedInterceptor locked = interceptor;
    if (locked != null) {
      locked.releaseKeptHolds();
    }
  }
}

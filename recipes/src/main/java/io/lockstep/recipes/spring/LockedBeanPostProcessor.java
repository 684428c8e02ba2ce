package io.lockstep.recipes.spring;

import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;

/**
 * Proxies the beans that have {@link Locked} methods, so that each such call runs under its key's
 * lock. Register it with {@link EnableLockstepLocking}, or as a bean of its own (a {@code static}
 * {@code @Bean} method, as for any bean post-processor):
 *
 * <pre>{@code
 * import io.lockstep.recipes.spring.LockedBeanPostProcessor;
 * import org.springframework.context.annotation.Bean;
 *
 * @Bean
 * static LockedBeanPostProcessor lockedBeanPostProcessor() {
 *   return new LockedBeanPostProcessor();
 * }
 * }</pre>
 *
 * <p>Spring AOP, no weaving: a bean that implements interfaces gets an interface-based proxy, any
 * other a class-based (CGLIB) one, unless {@link #setProxyTargetClass(boolean)} asks for the class
 * always. The annotation may sit on the class's method or on the interface's. A bean proxied
 * already (for {@code @Transactional}, say) gets the lock as its outermost advice: the lock is
 * taken before the transaction begins and released after it ends.
 */
public class LockedBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {
  private static final long serialVersionUID = 1L;

  /** Creates the post-processor; it finds the lock beans once the context runs. */
  public LockedBeanPostProcessor() {
    setBeforeExistingAdvisors(true);
  }

  /**
   * Sets the bean factory in which {@link Locked} methods find their lock beans.
   *
   * @param beanFactory the context's bean factory
   */
  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    super.setBeanFactory(beanFactory);
    this.advisor =
        new DefaultPointcutAdvisor(
            new AnnotationMatchingPointcut(null, Locked.class, true),
            new LockedInterceptor(beanFactory));
  }
}

package io.lockstep.recipes.spring;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.KeyedLocks;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.concurrent.Future;
import java.util.function.Function;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * What a {@link Locked} method needs at each call, worked out at its first call: the parsed key
 * expression, the wait budget and the lock source. Immutable; cached per method and target class.
 */
final class LockedMethod {
  private static final SpelExpressionParser PARSER = new SpelExpressionParser();
  private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();

  private final Method method; // the target class's method: its parameter names count
  private final String name; // Class.method, for messages
  private final String keySource;
  private final Expression key;
  private final Duration waitFor; // null: no limit
  private final BeanFactory beanFactory;
  private final Function<String, FencedLock> locks;

  private LockedMethod(Method method, Locked locked, BeanFactory beanFactory) {
    this.method = method;
    this.name = method.getDeclaringClass().getSimpleName() + "." + method.getName();
    this.keySource = locked.key();
    this.beanFactory = beanFactory;
    if (ReactiveAdapterRegistry.getSharedInstance().getAdapter(method.getReturnType()) != null
        || Future.class.isAssignableFrom(method.getReturnType())) {
      throw new IllegalStateException(
          "@Locked method "
              + name
              + " returns a "
              + method.getReturnType().getName()
              + ": asynchronous work is not supported (the lock would be released before it"
              + " ends); lock inside the work, or return its result");
    }
    try {
      this.key = PARSER.parseExpression(keySource);
    } catch (ParseException e) {
      throw new IllegalStateException(
          "@Locked method " + name + ": key \"" + keySource + "\" is no SpEL expression: " + e, e);
    }
    this.waitFor = waitFor(locked.waitFor());
    this.locks = locks(locked.registry());
  }

  /**
   * The plan of the {@code @Locked} method {@code method} called on an instance of {@code
   * targetClass}.
   *
   * @throws IllegalStateException if the annotation cannot be used (see {@link Locked})
   */
  static LockedMethod of(Method method, Class<?> targetClass, BeanFactory beanFactory) {
    Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
    Locked locked = AnnotatedElementUtils.findMergedAnnotation(specific, Locked.class);
    if (locked == null) {
      locked = AnnotatedElementUtils.findMergedAnnotation(method, Locked.class);
    }
    if (locked == null) {
      throw new IllegalStateException("not a @Locked method: " + method);
    }
    return new LockedMethod(specific, locked, beanFactory);
  }

  /** The method's name and key expression, for messages. */
  String describe() {
    return "@Locked method " + name + " (key \"" + keySource + "\")";
  }

  /** The wait budget, or null for no limit. */
  Duration waitFor() {
    return waitFor;
  }

  /**
   * The key for these arguments.
   *
   * @throws IllegalArgumentException if the expression fails, or gives null
   */
  String keyOf(Object target, Object[] args) {
    MethodBasedEvaluationContext context =
        new MethodBasedEvaluationContext(target, method, args, NAMES);
    if (beanFactory != null) {
      context.setBeanResolver(new BeanFactoryResolver(beanFactory));
    }
    Object value;
    try {
      value = key.getValue(context);
    } catch (EvaluationException e) {
      throw new IllegalArgumentException(describe() + ": the key cannot be evaluated: " + e, e);
    }
    if (value == null) {
      throw new IllegalArgumentException(
          describe()
              + ": the key is null (an argument by name needs classes compiled with -parameters;"
              + " #p0 works without)");
    }
    return value.toString();
  }

  /**
   * The lock of {@code key}.
   *
   * @throws IllegalArgumentException if the lock source refuses the key
   */
  FencedLock lockOf(String key) {
    try {
      return locks.apply(key);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          describe() + ": key '" + key + "' is refused: " + e.getMessage(), e);
    }
  }

  private Duration waitFor(String source) {
    String text = source;
    if (beanFactory instanceof ConfigurableBeanFactory configurable) {
      text = configurable.resolveEmbeddedValue(source);
    }
    if (text == null || text.isBlank()) {
      return null;
    }
    try {
      Duration budget = Duration.parse(text.strip());
      if (!budget.isNegative()) {
        return budget;
      }
    } catch (DateTimeParseException e) {
      // reported below
    }
    throw new IllegalStateException(
        "@Locked method "
            + name
            + ": waitFor \""
            + source
            + "\" is no ISO-8601 duration that is not negative, such as \"PT1S\"");
  }

  private Function<String, FencedLock> locks(String beanName) {
    Object source;
    if (!beanName.isEmpty()) {
      try {
        source = beanFactory.getBean(beanName);
      } catch (BeansException e) {
        throw new IllegalStateException(
            "@Locked method " + name + ": registry bean '" + beanName + "': " + e.getMessage(), e);
      }
    } else {
      LockstepLockRegistry registry =
          beanFactory.getBeanProvider(LockstepLockRegistry.class).getIfUnique();
      KeyedLocks keyed = beanFactory.getBeanProvider(KeyedLocks.class).getIfUnique();
      if ((registry == null) == (keyed == null)) {
        throw new IllegalStateException(
            "@Locked method "
                + name
                + ": "
                + (registry == null ? "no" : "both a")
                + " LockstepLockRegistry or KeyedLocks bean (exactly one is needed, or name one"
                + " with @Locked(registry = \"beanName\"))");
      }
      source = registry != null ? registry : keyed;
    }
    if (source instanceof LockstepLockRegistry registry) {
      return key -> registry.obtain(key).fencedLock();
    }
    if (source instanceof KeyedLocks keyed) {
      return keyed::mutex;
    }
    throw new IllegalStateException(
        "@Locked method "
            + name
            + ": bean '"
            + beanName
            + "' is a "
            + source.getClass().getName()
            + ", neither a LockstepLockRegistry nor a KeyedLocks");
  }
}

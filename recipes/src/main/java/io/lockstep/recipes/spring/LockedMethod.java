package io.lockstep.recipes.spring;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.KeyedLocks;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Optional;
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
import org.springframework.util.ClassUtils;

/**
 * What a {@link Locked} method needs at each call: the parsed key expression, the wait budget, what
 * a busy lock does, the time to live and the shortest hold, checked when the bean is created; and
 * the lock source, looked up at the first call. Cached per method and target class.
 */
final class LockedMethod {
  private static final SpelExpressionParser PARSER = new SpelExpressionParser();
  private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();

  private final Method method; // the target class's method: its parameter names count
  private final String name; // Class.method, for messages
  private final String keySource;
  private final Expression key;
  private final Duration waitFor; // null: no limit
  private final Locked.WhenBusy whenBusy;
  private final Object skippedResult; // what a skipped call returns: null or Optional.empty()
  private final Duration ttl; // null: none
  private final boolean renew;
  private final Duration holdAtLeast; // null: none
  private final Expression fence; // the fenced resource's expression, or null for none
  private final BeanFactory beanFactory;
  private final String registry;
  private volatile Function<String, FencedLock> locks; // looked up at the first call

  private LockedMethod(
      Method method, Locked locked, BeanFactory beanFactory, LockedDefaults defaults) {
    this.method = method;
    this.name = method.getDeclaringClass().getSimpleName() + "." + method.getName();
    this.keySource = locked.key();
    this.beanFactory = beanFactory;
    this.registry = locked.registry();
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
    this.whenBusy = locked.whenBusy();
    Duration budget = duration("waitFor", locked.waitFor(), false, false);
    this.waitFor = budget == null && whenBusy == Locked.WhenBusy.SKIP ? Duration.ZERO : budget;
    this.skippedResult = skippedResultOf();
    Duration own = duration("ttl", locked.ttl(), true, true);
    this.ttl = own != null ? own : defaults.ttl();
    String ttlSource =
        own != null
            ? "ttl (" + ttl + ")"
            : "the default ttl (" + ttl + ", " + LockedDefaults.TTL_PROPERTY + ")";
    this.renew = locked.renew();
    if (renew && ttl == null) {
      throw new IllegalStateException(
          "@Locked method "
              + name
              + ": renew = true needs a ttl (on the annotation, or "
              + LockedDefaults.TTL_PROPERTY
              + ")");
    }
    Duration least = duration("holdAtLeast", locked.holdAtLeast(), false, true);
    this.holdAtLeast = least == null || least.isZero() ? null : least;
    if (holdAtLeast != null && ttl != null && holdAtLeast.compareTo(ttl) > 0) {
      throw new IllegalStateException(
          "@Locked method "
              + name
              + ": holdAtLeast ("
              + holdAtLeast
              + ") is longer than "
              + ttlSource
              + ": the lock cannot be kept longer than it may be held");
    }
    String fenceSource = locked.fence().strip();
    if (fenceSource.isEmpty()) {
      this.fence = null;
    } else if (!ClassUtils.isPresent(
        "org.springframework.jdbc.datasource.DataSourceUtils",
        method.getDeclaringClass().getClassLoader())) {
      throw new IllegalStateException(
          "@Locked method "
              + name
              + ": fence \""
              + fenceSource
              + "\" admits the call's token in the database, which needs spring-jdbc on the class"
              + " path");
    } else {
      try {
        this.fence = PARSER.parseExpression(fenceSource);
      } catch (ParseException e) {
        throw new IllegalStateException(
            "@Locked method "
                + name
                + ": fence \""
                + fenceSource
                + "\" is no SpEL expression: "
                + e,
            e);
      }
    }
  }

  /**
   * The plan of the {@code @Locked} method {@code method} called on an instance of {@code
   * targetClass}.
   *
   * @throws IllegalStateException if the annotation cannot be used (see {@link Locked})
   */
  static LockedMethod of(
      Method method, Class<?> targetClass, BeanFactory beanFactory, LockedDefaults defaults) {
    Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
    Locked locked = AnnotatedElementUtils.findMergedAnnotation(specific, Locked.class);
    if (locked == null) {
      locked = AnnotatedElementUtils.findMergedAnnotation(method, Locked.class);
    }
    if (locked == null) {
      throw new IllegalStateException("not a @Locked method: " + method);
    }
    return new LockedMethod(specific, locked, beanFactory, defaults);
  }

  /** The method's name and key expression, for messages. */
  String describe() {
    return "@Locked method " + name + " (key \"" + keySource + "\")";
  }

  /** The method's class and name ({@code Class.method}), as skips are counted. */
  String name() {
    return name;
  }

  /** The wait budget, or null for no limit. */
  Duration waitFor() {
    return waitFor;
  }

  /** Whether a call that finds the lock busy returns instead of throwing. */
  boolean skipsWhenBusy() {
    return whenBusy == Locked.WhenBusy.SKIP;
  }

  /** What a skipped call returns: null, or {@code Optional.empty()}. */
  Object skippedResult() {
    return skippedResult;
  }

  /** The time to live of the call's hold, or null for none. */
  Duration ttl() {
    return ttl;
  }

  /** Whether the time to live is renewed while the method runs. */
  boolean renew() {
    return renew;
  }

  /** The shortest hold from the grant, or null for none. */
  Duration holdAtLeast() {
    return holdAtLeast;
  }

  /** Whether the call's token is admitted in the database ({@code fence}). */
  boolean fenced() {
    return fence != null;
  }

  /**
   * The fenced resource for these arguments.
   *
   * @throws IllegalArgumentException if the expression cannot be evaluated, or is null
   */
  String fenceOf(Object target, Object[] args) {
    return evaluate(fence, "fence", target, args);
  }

  /**
   * The key for these arguments.
   *
   * @throws IllegalArgumentException if the expression fails, or gives null
   */
  String keyOf(Object target, Object[] args) {
    return evaluate(key, "key", target, args);
  }

  private String evaluate(Expression expression, String what, Object target, Object[] args) {
    MethodBasedEvaluationContext context =
        new MethodBasedEvaluationContext(target, method, args, NAMES);
    if (beanFactory != null) {
      context.setBeanResolver(new BeanFactoryResolver(beanFactory));
    }
    Object value;
    try {
      value = expression.getValue(context);
    } catch (EvaluationException e) {
      throw new IllegalArgumentException(
          describe() + ": the " + what + " cannot be evaluated: " + e, e);
    }
    if (value == null) {
      throw new IllegalArgumentException(
          describe()
              + ": the "
              + what
              + " is null (an argument by name needs classes compiled with -parameters;"
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
    Function<String, FencedLock> source = locks;
    if (source == null) {
      source = locks(registry); // racing first calls look it up alike
      locks = source;
    }
    try {
      return source.apply(key);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          describe() + ": key '" + key + "' is refused: " + e.getMessage(), e);
    }
  }

  /**
   * The duration of the attribute {@code attribute}: ISO-8601, or a placeholder resolving to it.
   *
   * @param positive whether zero is refused too (else only a negative duration is)
   * @param counted whether it must count in nanoseconds (a budget saturates instead)
   * @return null if empty
   */
  private Duration duration(String attribute, String source, boolean positive, boolean counted) {
    String text = source;
    if (beanFactory instanceof ConfigurableBeanFactory configurable) {
      try {
        text = configurable.resolveEmbeddedValue(source);
      } catch (IllegalArgumentException e) { // a strict resolver's unresolvable placeholder
        throw new IllegalStateException(
            attributeNamed(attribute, source) + " cannot be resolved: " + e.getMessage(), e);
      }
    }
    if (text == null || text.isBlank()) {
      return null;
    }
    try {
      Duration value = Duration.parse(text.strip());
      if (!value.isNegative() && !(positive && value.isZero())) {
        if (counted) {
          var unused = value.toNanos(); // ArithmeticException if too long to count
        }
        return value;
      }
    } catch (DateTimeParseException | ArithmeticException e) {
      // reported below
    }
    throw new IllegalStateException(
        attributeNamed(attribute, source)
            + (text.equals(source) ? "" : " (\"" + text + "\")")
            + " is no ISO-8601 duration that is "
            + (positive ? "positive" : "not negative")
            + (counted ? " and short enough to count in nanoseconds" : "")
            + ", such as \"PT30S\"");
  }

  /** The start of a message about {@code attribute}, as written ({@code source}). */
  private String attributeNamed(String attribute, String source) {
    return "@Locked method " + name + ": " + attribute + " \"" + source + "\"";
  }

  /** What a skipped call returns, checked against the return type. */
  private Object skippedResultOf() {
    Class<?> type = method.getReturnType();
    if (whenBusy != Locked.WhenBusy.SKIP || type == void.class) {
      return null;
    }
    if (type.isPrimitive()) {
      throw new IllegalStateException(
          "@Locked method "
              + name
              + ": whenBusy = SKIP on a method returning "
              + type.getName()
              + ": a skipped call has no value to return (return void, an Optional or an object,"
              + " which a skipped call returns empty or null)");
    }
    return type == Optional.class ? Optional.empty() : null;
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

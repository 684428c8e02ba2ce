package io.lockstep.recipes.spring;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockHold;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Runs a {@link Locked} method under its key's lock: evaluates the key, takes a hold (or reuses the
 * hold of an outer call of this thread on the same lock), makes it {@link LockedCall#current()} for
 * the call, and when the call ends releases it, or keeps it for its {@code holdAtLeast} ({@link
 * KeptHolds}). A call that finds the lock busy throws, or returns at once when it skips.
 */
final class LockedInterceptor implements MethodInterceptor {
  private static final Logger skipLog = LoggerFactory.getLogger(Locked.class);

  private final BeanFactory beanFactory;
  private final Supplier<LockedDefaults> defaults;
  private final LockedSkips skips;
  private final KeptHolds kept = new KeptHolds();
  private volatile LockedFence fences; // null until the first call of a fenced method
  private final Map<AnnotatedElementKey, LockedMethod> methods = new ConcurrentHashMap<>();

  LockedInterceptor(BeanFactory beanFactory, Supplier<LockedDefaults> defaults, LockedSkips skips) {
    this.beanFactory = beanFactory;
    this.defaults = defaults;
    this.skips = skips;
  }

  /**
   * Checks the annotations of the {@code @Locked} methods of {@code targetClass}, as its bean is
   * created.
   *
   * @throws IllegalStateException if an annotation cannot be used, naming the method
   */
  void check(Class<?> targetClass) {
    for (Method method : lockedMethods(targetClass)) {
      var unused = planOf(method, targetClass);
    }
  }

  private static Set<Method> lockedMethods(Class<?> targetClass) {
    return MethodIntrospector.selectMethods(
            targetClass,
            (MethodIntrospector.MetadataLookup<Locked>)
                method -> AnnotatedElementUtils.findMergedAnnotation(method, Locked.class))
        .keySet();
  }

  /**
   * Checks that a class-based proxy of {@code targetClass} intercepts each of its {@code @Locked}
   * methods: a final one would run on the proxy itself, without the lock.
   *
   * @throws IllegalStateException if one is final, naming the method
   */
  void checkOverridable(Class<?> targetClass) {
    for (Method method : lockedMethods(targetClass)) {
      if (Modifier.isFinal(AopUtils.getMostSpecificMethod(method, targetClass).getModifiers())) {
        throw new IllegalStateException(
            planOf(method, targetClass).describe()
                + " is final: the bean's class-based proxy cannot intercept it, so it would run"
                + " without the lock; make it non-final, or declare it on an interface");
      }
    }
  }

  /** Releases the holds kept for their {@code holdAtLeast}, and from now on at each call's end. */
  void releaseKeptHolds() {
    kept.releaseAll();
  }

  /** How many holds are kept past their call; for tests. */
  int keptHolds() {
    return kept.size();
  }

  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    Object target = invocation.getThis();
    Method method = invocation.getMethod();
    Class<?> targetClass =
        target == null ? method.getDeclaringClass() : AopProxyUtils.ultimateTargetClass(target);
    LockedMethod locked = planOf(method, targetClass);
    String key = locked.keyOf(target, invocation.getArguments());
    FencedLock lock = locked.lockOf(key);
    CallHold outer = LockedCall.heldOnThisThread(lock);
    if (outer != null) {
      // Nested in a call on the same lock: runs under the outer hold, as a reentrant lock() would,
      // so not once that hold is lost (its time to live ran out, its session ended).
      outer.hold().checkHeld();
      LockedCall.push(lock, outer);
      try {
        return locked.fenced() // fenced inside, too
            ? fences()
                .call(locked.fenceOf(target, invocation.getArguments()), outer.hold(), invocation)
            : invocation.proceed();
      } finally {
        LockedCall.pop();
      }
    }
    LockHold hold = acquire(locked, key, lock);
    if (hold == null) {
      skips.skipped(locked.name(), key);
      skipLog.debug(
          "{} skipped: the lock of key '{}' was not granted within {} (held elsewhere, or the"
              + " server did not answer the first try in time: {})",
          locked.describe(),
          key,
          locked.waitFor(),
          lock);
      return locked.skippedResult();
    }
    CallHold call;
    try {
      call = CallHold.granted(hold, locked.ttl(), locked.renew());
    } catch (RuntimeException e) {
      hold.close(); // not a hold of ours: nothing to time, so nothing kept either
      throw e;
    }
    LockedCall.push(lock, call);
    try {
      return locked.fenced()
          ? fences().call(locked.fenceOf(target, invocation.getArguments()), hold, invocation)
          : invocation.proceed();
    } finally {
      LockedCall.pop();
      kept.callEnded(call, locked.holdAtLeast());
    }
  }

  /** The fence of {@code fence =} methods: made at the first such call (spring-jdbc is there). */
  private LockedFence fences() {
    LockedFence made = fences;
    if (made == null) {
      made = LockedFence.of(beanFactory);
      fences = made; // two first calls at once make two alike: either does
    }
    return made;
  }

  private LockedMethod planOf(Method method, Class<?> targetClass) {
    return methods.computeIfAbsent(
        new AnnotatedElementKey(method, targetClass),
        k -> LockedMethod.of(method, targetClass, beanFactory, defaults.get()));
  }

  /** The call's hold; or null if the lock was busy past the budget and the method skips. */
  private static LockHold acquire(LockedMethod locked, String key, FencedLock lock) {
    Duration waitFor = locked.waitFor();
    try {
      if (waitFor == null) {
        return lock.hold();
      }
      Optional<LockHold> hold = lock.tryHold(waitFor);
      if (hold.isPresent() || locked.skipsWhenBusy()) {
        return hold.orElse(null);
      }
      throw new LockTimeoutException(
          locked.describe()
              + ": the lock of key '"
              + key
              + "' was not granted within "
              + waitFor
              + " ("
              + lock
              + ")");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LockException(
          locked.describe() + ": interrupted while waiting for the lock of key '" + key + "'", e);
    }
  }
}

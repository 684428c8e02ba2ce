package io.lockstep.recipes.spring;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockHold;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.AnnotatedElementKey;

/**
 * Runs a {@link Locked} method under its key's lock: evaluates the key, takes a hold (or reuses the
 * hold of an outer call of this thread on the same lock), makes it {@link LockedCall#current()} for
 * the call, and closes it when the call ends.
 */
final class LockedInterceptor implements MethodInterceptor {
  private final BeanFactory beanFactory;
  private final Map<AnnotatedElementKey, LockedMethod> methods = new ConcurrentHashMap<>();

  LockedInterceptor(BeanFactory beanFactory) {
    this.beanFactory = beanFactory;
  }

  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    Object target = invocation.getThis();
    Method method = invocation.getMethod();
    Class<?> targetClass =
        target == null ? method.getDeclaringClass() : AopProxyUtils.ultimateTargetClass(target);
    LockedMethod locked =
        methods.computeIfAbsent(
            new AnnotatedElementKey(method, targetClass),
            k -> LockedMethod.of(method, targetClass, beanFactory));
    String key = locked.keyOf(target, invocation.getArguments());
    FencedLock lock = locked.lockOf(key);
    LockHold outer = LockedCall.heldOnThisThread(lock);
    LockHold hold = outer != null ? outer : acquire(locked, key, lock);
    LockedCall.push(lock, hold);
    try {
      return invocation.proceed();
    } finally {
      LockedCall.pop();
      if (outer == null) {
        hold.close();
      }
    }
  }

  private static LockHold acquire(LockedMethod locked, String key, FencedLock lock) {
    Duration waitFor = locked.waitFor();
    try {
      if (waitFor == null) {
        return lock.hold();
      }
      Optional<LockHold> hold = lock.tryHold(waitFor);
      if (hold.isEmpty()) {
        throw new LockTimeoutException(
            locked.describe()
                + ": the lock of key '"
                + key
                + "' was not granted within "
                + waitFor
                + " ("
                + lock
                + ")");
      }
      return hold.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LockException(
          locked.describe() + ": interrupted while waiting for the lock of key '" + key + "'", e);
    }
  }
}

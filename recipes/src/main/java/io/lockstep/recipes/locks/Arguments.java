package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.queue.NodeNames;
import io.lockstep.recipes.internal.zk.PathArguments;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;

/** Argument checks shared by the recipes: each failure names the argument and the bad value. */
final class Arguments {
  private Arguments() {}

  /** Returns {@code client}, or throws if it is null. */
  static CuratorFramework client(CuratorFramework client) {
    return Objects.requireNonNull(client, "client");
  }

  /**
   * Returns {@code path} if ZooKeeper accepts it as an absolute path (see {@link PathArguments}).
   */
  static String path(String path, String name) {
    return PathArguments.absolutePath(path, name);
  }

  /** Returns {@code value}, or throws, naming it, if it is less than 1. */
  static int atLeastOne(int value, String name) {
    if (value < 1) {
      throw new IllegalArgumentException(name + " must be at least 1: " + value);
    }
    return value;
  }

  /** Converts a wait budget to nanoseconds, refusing a negative time or a null unit. */
  static long timeoutNanos(long time, TimeUnit unit) {
    Objects.requireNonNull(unit, "unit");
    if (time < 0) {
      throw new IllegalArgumentException("time must not be negative: " + time + " " + unit);
    }
    return unit.toNanos(time);
  }

  /**
   * Converts a budget to nanoseconds, refusing a null or negative one; a budget too long to count
   * in nanoseconds is as good as forever, and saturates.
   */
  static long timeoutNanos(Duration timeout, String name) {
    Objects.requireNonNull(timeout, name);
    if (timeout.isNegative()) {
      throw new IllegalArgumentException(name + " must not be negative: " + timeout);
    }
    try {
      return timeout.toNanos();
    } catch (ArithmeticException tooLong) {
      return Long.MAX_VALUE;
    }
  }

  /** Checks that a driver's lock name can be part of a node name. */
  static String lockName(String lockName) {
    Objects.requireNonNull(lockName, "driver.lockName()");
    if (lockName.isEmpty() || lockName.indexOf('/') >= 0) {
      throw new IllegalArgumentException(
          "driver.lockName() must be non-empty and free of '/': '" + lockName + "'");
    }
    path("/" + NodeNames.prefix("x") + lockName, "driver.lockName()");
    return lockName;
  }
}

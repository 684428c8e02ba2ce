package io.lockstep.recipes.internal.zk;

import java.util.Objects;
import org.apache.curator.utils.PathUtils;

/**
 * The checks of the paths and names the API takes, in every package (the locks' and the
 * election's), by ZooKeeper's rules: each failure names the argument and the bad value.
 */
public final class PathArguments {
  private PathArguments() {}

  /** Returns {@code value}, or throws, naming it, if it is null or empty. */
  public static String notEmpty(String value, String name) {
    Objects.requireNonNull(value, name);
    if (value.isEmpty()) {
      throw new IllegalArgumentException(name + " must not be empty");
    }
    return value;
  }

  /**
   * Returns {@code path} if ZooKeeper accepts it as an absolute path: not empty, starting with
   * {@code /}, without a trailing {@code /}, empty or relative segments, or characters ZooKeeper
   * refuses.
   */
  public static String absolutePath(String path, String name) {
    notEmpty(path, name);
    try {
      return PathUtils.validatePath(path);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          name + " is not a valid ZooKeeper path: '" + path + "': " + e.getMessage(), e);
    }
  }
}

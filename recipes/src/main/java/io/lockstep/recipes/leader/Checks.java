package io.lockstep.recipes.leader;

import java.util.Objects;
import org.apache.curator.utils.PathUtils;

/** Argument checks of the election: each failure names the argument and the bad value. */
final class Checks {
  private Checks() {}

  /** Returns {@code path} if ZooKeeper accepts it as an absolute path, else throws naming it. */
  static String path(String path) {
    Objects.requireNonNull(path, "path");
    if (path.isEmpty()) {
      throw new IllegalArgumentException("path must not be empty");
    }
    try {
      return PathUtils.validatePath(path);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "path is not a valid ZooKeeper path: '" + path + "': " + e.getMessage(), e);
    }
  }
}

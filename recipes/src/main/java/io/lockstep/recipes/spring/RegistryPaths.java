package io.lockstep.recipes.spring;

import io.lockstep.recipes.locks.KeyLayout;
import java.util.Collection;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.curator.utils.PathUtils;

/**
 * How a {@link LockstepLockRegistry} names its locks: a key is a {@code String}, and its lock path
 * is the root and the key (Spring's {@code ZookeeperLockRegistry} mapping), or the key under the
 * root as a {@link KeyLayout} places it. Checks keys and paths, naming the argument.
 */
final class RegistryPaths {
  private final String prefix; // the root, ending with '/'
  private volatile KeyLayout layout; // null: Spring's mapping, prefix + key

  /**
   * @throws NullPointerException if {@code root} is null
   * @throws IllegalArgumentException if {@code root} does not start a valid absolute path
   */
  RegistryPaths(String root) {
    Objects.requireNonNull(root, "root");
    this.prefix = root.endsWith("/") ? root : root + "/";
    try {
      PathUtils.validatePath(prefix + "key");
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "root is not the start of a valid ZooKeeper path: '" + root + "': " + e.getMessage(), e);
    }
  }

  /** The root, ending with {@code '/'}. */
  String prefix() {
    return prefix;
  }

  void setLayout(KeyLayout layout) {
    this.layout = layout;
  }

  /** {@code key} as a key: a {@code String}, or an exception naming what it is. */
  static String keyOf(Object key) {
    Objects.requireNonNull(key, "key");
    if (!(key instanceof String)) {
      throw new IllegalArgumentException(
          "key must be a String, as for Spring's ZookeeperLockRegistry, not a "
              + key.getClass().getName()
              + ": "
              + key);
    }
    return (String) key;
  }

  /** The lock path of {@code key}, checked. */
  String pathOf(String key) {
    KeyLayout hashed = layout;
    String path = hashed == null ? prefix + key : hashed.pathOf(root(), key);
    try {
      return PathUtils.validatePath(path);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "key '"
              + key
              + "' does not make a valid ZooKeeper path: '"
              + path
              + "': "
              + e.getMessage(),
          e);
    }
  }

  /** The lock paths of {@code keys} by key, in key order, checked: at least one, none twice. */
  TreeMap<String, String> pathsByKey(Collection<?> keys) {
    Objects.requireNonNull(keys, "keys");
    if (keys.isEmpty()) {
      throw new IllegalArgumentException("keys is empty: name at least one key");
    }
    TreeMap<String, String> pathsByKey = new TreeMap<>();
    for (Object key : keys) {
      String name = keyOf(key);
      if (pathsByKey.put(name, pathOf(name)) != null) {
        throw new IllegalArgumentException("keys names '" + name + "' twice: " + keys);
      }
    }
    return pathsByKey;
  }

  private String root() {
    return prefix.length() == 1 ? prefix : prefix.substring(0, prefix.length() - 1);
  }
}

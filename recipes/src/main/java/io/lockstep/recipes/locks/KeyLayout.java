package io.lockstep.recipes.locks;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;
import org.apache.curator.utils.ZKPaths;

/**
 * Where the lock of a key lives under a root: the mapping of {@link KeyedLocks}, as a value that
 * other registries of keyed locks can share.
 *
 * <p>Every layout starts from the key's node name: ASCII letters, digits, {@code '-'}, {@code '_'}
 * and {@code '.'} stay as they are, every other character becomes the percent-encoded bytes of its
 * UTF-8 form (see {@link KeyedLocks} for the whole rule). Then:
 *
 * <ul>
 *   <li>{@link #flat()}: {@code <root>/<name>}, one directory per key right under the root. Simple
 *       to read, but the root holds one child per key: past some 20,000 keys of 40 characters, a
 *       {@code getChildren} of the root no longer fits in ZooKeeper's default 1 MB packet ({@code
 *       jute.maxbuffer}), so tools that list the root fail (taking a lock never lists the root).
 *   <li>{@link #hashed(int) hashed(levels)}: {@code <root>/<h0>/<h1>/.../<name>}, where {@code h0},
 *       {@code h1}, ... are the first {@code levels} bytes of the SHA-256 digest of the node name's
 *       ASCII bytes, each written as two lower-case hex digits. Each directory above the keys holds
 *       at most 256 children; the directories of the last level share the keys evenly: 1,000,000
 *       keys give about 15 keys a directory with 2 levels, about 3,900 with 1.
 * </ul>
 *
 * <p>For example the key {@code order-17} is {@code <root>/order-17} flat, and {@code
 * <root>/72/a9/order-17} hashed over two levels, because SHA-256 of {@code "order-17"} starts with
 * the bytes {@code 72 a9}. Any tool computes it the same way: {@code printf %s order-17 |
 * sha256sum}.
 *
 * <p>The directories are created as container nodes as a lock needs them, each together with the
 * child below it, so the server reaps them once their keys are unlocked (see docs/services.md for
 * the server settings that govern how fast). Every process that locks a key must use the same
 * layout: two layouts put the same key's lock in two places.
 */
public final class KeyLayout {
  /** The most hashed levels: 4 bytes of digest, 2^32 directories at the last level. */
  private static final int MAX_LEVELS = 4;

  private static final KeyLayout FLAT = new KeyLayout(0);

  private final int levels;

  private KeyLayout(int levels) {
    this.levels = levels;
  }

  /**
   * One directory per key right under the root: {@code <root>/<name>}, the layout of {@link
   * KeyedLocks} without a layout given.
   *
   * @return the flat layout
   */
  public static KeyLayout flat() {
    return FLAT;
  }

  /**
   * Keys spread over {@code levels} levels of 256 hashed directories: {@code
   * <root>/<h0>/.../<name>} (see the class comment). Two levels keep every directory under about
   * 1,000 children up to some 50 million keys.
   *
   * @param levels how many hashed directories lie between the root and a key: 1 to 4
   * @return the hashed layout
   * @throws IllegalArgumentException if {@code levels} is not between 1 and 4
   */
  public static KeyLayout hashed(int levels) {
    if (levels < 1 || levels > MAX_LEVELS) {
      throw new IllegalArgumentException(
          "levels must be between 1 and " + MAX_LEVELS + ", not " + levels);
    }
    return new KeyLayout(levels);
  }

  /**
   * How many hashed directories lie between the root and a key's directory: 0 for the flat layout.
   *
   * @return the levels
   */
  public int levels() {
    return levels;
  }

  /**
   * The lock path of {@code key} under {@code root}.
   *
   * @param root the root of the locks, a valid ZooKeeper path
   * @param key any non-empty string
   * @return the key's lock path
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code key} is empty or its node name is longer than 1,024
   *     characters
   */
  public String pathOf(String root, String key) {
    Objects.requireNonNull(root, "root");
    String name = KeyedLocks.nodeName(key);
    return ZKPaths.makePath(ZKPaths.makePath(root, directoriesOf(name)), name);
  }

  /**
   * The key whose lock path under {@code root} is {@code path}: the inverse of {@link
   * #pathOf(String, String)}.
   *
   * @param root the root of the locks
   * @param path a key's lock path under {@code root} in this layout
   * @return the key
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code path} is not a key's lock path under {@code root} in
   *     this layout
   */
  public String keyOf(String root, String path) {
    Objects.requireNonNull(root, "root");
    Objects.requireNonNull(path, "path");
    ZKPaths.PathAndNode parts = ZKPaths.getPathAndNode(path);
    String name = parts.getNode();
    String key = KeyNames.decode(name);
    if (!ZKPaths.makePath(root, directoriesOf(name)).equals(parts.getPath())) {
      throw new IllegalArgumentException(
          "path is not a lock path under " + root + " in the layout " + this + ": " + path);
    }
    return key;
  }

  /** The hashed directories of node name {@code name}, "72/a9", or "" when flat. */
  String directoriesOf(String name) {
    if (levels == 0) {
      return "";
    }
    byte[] digest = sha256().digest(name.getBytes(StandardCharsets.US_ASCII));
    StringBuilder directories = new StringBuilder(levels * 3);
    for (int level = 0; level < levels; level++) {
      if (level > 0) {
        directories.append('/');
      }
      int b = digest[level] & 0xff;
      directories.append(Character.forDigit(b >> 4, 16)).append(Character.forDigit(b & 0xf, 16));
    }
    return directories.toString();
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof KeyLayout && ((KeyLayout) other).levels == levels;
  }

  @Override
  public int hashCode() {
    return levels;
  }

  @Override
  public String toString() {
    return levels == 0 ? "flat" : "hashed(" + levels + ")";
  }
}

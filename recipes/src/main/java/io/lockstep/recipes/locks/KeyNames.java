package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.zk.PathArguments;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The node names of {@link KeyedLocks}' keys: one name per string, and back. ASCII letters, digits,
 * {@code '-'}, {@code '_'} and {@code '.'} stay as they are; every other code point is written as
 * the percent-encoded bytes of its UTF-8 form ({@code %C3%A9}); a surrogate that is not half of a
 * pair, which has no UTF-8 form, is written {@code %u} and its four hex digits ({@code %uD800}); a
 * key of only dots is encoded whole, and the first {@code '_'} of a key starting {@code _c_}, so
 * that no key's node looks like a lock node ({@code _c_<uuid>-...}). Every character of a name is
 * one ZooKeeper accepts, and no two keys share a name: {@link #decode} gives the key back.
 */
final class KeyNames {
  private KeyNames() {}

  /** The node name of {@code key}, which must not be empty. */
  static String encode(String key) {
    PathArguments.notEmpty(key, "key");
    boolean onlyDots = key.chars().allMatch(c -> c == '.');
    StringBuilder name = new StringBuilder(key.length());
    for (int i = 0; i < key.length(); ) {
      int point = key.codePointAt(i);
      int chars = Character.charCount(point);
      boolean lockNodeLike = i == 0 && key.startsWith("_c_"); // never taken for a lock node
      if (isKept(point) && !(point == '.' && onlyDots) && !lockNodeLike) {
        name.append((char) point);
      } else if (chars == 1 && Character.isSurrogate((char) point)) {
        name.append("%u").append(hex(point, 4)); // a lone surrogate: no UTF-8 form
      } else {
        for (byte b : key.substring(i, i + chars).getBytes(StandardCharsets.UTF_8)) {
          name.append('%').append(hex(b & 0xff, 2));
        }
      }
      i += chars;
    }
    return name.toString();
  }

  /**
   * The key whose node name is {@code name}.
   *
   * @throws IllegalArgumentException if no key has that name
   */
  static String decode(String name) {
    StringBuilder key = new StringBuilder(name.length());
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (int i = 0; i < name.length(); ) {
      char c = name.charAt(i);
      if (c == '%' && i + 1 < name.length() && name.charAt(i + 1) == 'u') {
        flush(bytes, key, name);
        key.append((char) parseHex(name, i + 2, 4));
        i += 6;
      } else if (c == '%') {
        bytes.write(parseHex(name, i + 1, 2));
        i += 3;
      } else if (isKept(c)) {
        flush(bytes, key, name);
        key.append(c);
        i++;
      } else {
        throw new IllegalArgumentException("not the node name of a key: " + name);
      }
    }
    flush(bytes, key, name);
    if (!encode(key.toString()).equals(name)) {
      throw new IllegalArgumentException("not the node name of a key: " + name);
    }
    return key.toString();
  }

  private static boolean isKept(int c) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9')
        || c == '-'
        || c == '_'
        || c == '.';
  }

  private static String hex(int value, int digits) {
    StringBuilder hex =
        new StringBuilder(Integer.toHexString(value).toUpperCase(java.util.Locale.ROOT));
    while (hex.length() < digits) {
      hex.insert(0, '0');
    }
    return hex.toString();
  }

  private static int parseHex(String name, int from, int digits) {
    if (from + digits > name.length()) {
      throw new IllegalArgumentException("not the node name of a key: " + name);
    }
    int value = 0;
    for (int i = from; i < from + digits; i++) {
      int digit = Character.digit(name.charAt(i), 16);
      if (digit < 0) {
        throw new IllegalArgumentException("not the node name of a key: " + name);
      }
      value = value * 16 + digit;
    }
    return value;
  }

  /** Appends the UTF-8 bytes gathered so far, which must be whole code points. */
  private static void flush(ByteArrayOutputStream bytes, StringBuilder key, String name) {
    if (bytes.size() == 0) {
      return;
    }
    try {
      key.append(
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(bytes.toByteArray())));
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException("not the node name of a key: " + name, e);
    }
    bytes.reset();
  }
}

package io.lockstep.recipes.internal.engine;

import java.util.Locale;

/**
 * JSON string literals, written by hand for the inspector command and the fencing filter's problem
 * details (the core has no JSON library). A literal comes out as ASCII: quotes, backslashes,
 * control characters and every character beyond ASCII are escaped (a backslash, {@code u} and four
 * hex digits), so it is valid JSON in any encoding, lone surrogates too.
 */
public final class Json {
  private Json() {}

  /**
   * Appends {@code text} to {@code out} as a JSON string literal, quotes included.
   *
   * @param out where the literal goes
   * @param text the string
   * @return {@code out}
   */
  public static StringBuilder quote(StringBuilder out, String text) {
    out.append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20 || c > 0x7e) {
            out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"');
  }
}

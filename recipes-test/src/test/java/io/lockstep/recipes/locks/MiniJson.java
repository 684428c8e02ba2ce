package io.lockstep.recipes.locks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict reader of JSON text for the tests (the test class path has no JSON library): objects
 * become maps, arrays lists, numbers longs or doubles; anything that is not JSON throws.
 */
final class MiniJson {
  private final String text;
  private int at;

  private MiniJson(String text) {
    this.text = text;
  }

  static Object parse(String text) {
    MiniJson reader = new MiniJson(text);
    Object value = reader.value();
    reader.blanks();
    if (reader.at != text.length()) {
      throw reader.error("text after the value");
    }
    return value;
  }

  private Object value() {
    blanks();
    char c = peek();
    if (c == '{') {
      Map<String, Object> object = new LinkedHashMap<>();
      at++;
      if (!consume('}')) {
        do {
          blanks();
          String name = string();
          expect(':');
          object.put(name, value());
        } while (consume(','));
        expect('}');
      }
      return object;
    }
    if (c == '[') {
      List<Object> array = new ArrayList<>();
      at++;
      if (!consume(']')) {
        do {
          array.add(value());
        } while (consume(','));
        expect(']');
      }
      return array;
    }
    if (c == '"') {
      return string();
    }
    for (String word : List.of("null", "true", "false")) {
      if (text.startsWith(word, at)) {
        at += word.length();
        return word.equals("null") ? null : Boolean.valueOf(word);
      }
    }
    int start = at;
    while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
      at++;
    }
    String number = text.substring(start, at);
    if (number.isEmpty()) {
      throw error("no value");
    }
    return number.matches("-?\\d+") ? (Object) Long.valueOf(number) : Double.valueOf(number);
  }

  private String string() {
    expect('"');
    StringBuilder out = new StringBuilder();
    while (true) {
      char c = text.charAt(at++);
      if (c == '"') {
        return out.toString();
      }
      if (c < 0x20) {
        throw error("a raw control character in a string");
      }
      if (c != '\\') {
        out.append(c);
        continue;
      }
      char escaped = text.charAt(at++);
      switch (escaped) {
        case '"', '\\', '/' -> out.append(escaped);
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case 'n' -> out.append('\n');
        case 'r' -> out.append('\r');
        case 't' -> out.append('\t');
        case 'u' -> {
          out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
          at += 4;
        }
        default -> throw error("a bad escape");
      }
    }
  }

  private void blanks() {
    while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
      at++;
    }
  }

  private char peek() {
    if (at >= text.length()) {
      throw error("end of text");
    }
    return text.charAt(at);
  }

  private boolean consume(char c) {
    blanks();
    if (at < text.length() && text.charAt(at) == c) {
      at++;
      return true;
    }
    return false;
  }

  private void expect(char c) {
    if (!consume(c)) {
      throw error("expected '" + c + "'");
    }
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("not JSON: " + what + " at " + at + " of " + text);
  }
}

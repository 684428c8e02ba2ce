package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.Json;

/**
 * Writes JSON by hand, for the inspector command (the core has no JSON library): objects, arrays,
 * strings, numbers and null, with the commas between them. Strings come out as ASCII ({@link
 * Json#quote}), so the output is valid JSON in any encoding.
 */
final class JsonWriter {
  private final StringBuilder out = new StringBuilder();
  private boolean needsComma; // a value was written in the current object or array

  JsonWriter beginObject() {
    return open('{');
  }

  JsonWriter endObject() {
    return close('}');
  }

  JsonWriter beginArray() {
    return open('[');
  }

  JsonWriter endArray() {
    return close(']');
  }

  /** The name of the next member of an object. */
  JsonWriter name(String name) {
    comma();
    quote(name);
    out.append(':');
    needsComma = false;
    return this;
  }

  JsonWriter value(String value) {
    comma();
    if (value == null) {
      out.append("null");
    } else {
      quote(value);
    }
    needsComma = true;
    return this;
  }

  JsonWriter value(long value) {
    comma();
    out.append(value);
    needsComma = true;
    return this;
  }

  @Override
  public String toString() {
    return out.toString();
  }

  private JsonWriter open(char bracket) {
    comma();
    out.append(bracket);
    needsComma = false;
    return this;
  }

  /** Ends an object or an array, which is a value of what encloses it. */
  private JsonWriter close(char bracket) {
    out.append(bracket);
    needsComma = true;
    return this;
  }

  private void comma() {
    if (needsComma) {
      out.append(',');
    }
  }

  private void quote(String text) {
    Json.quote(out, text);
  }
}

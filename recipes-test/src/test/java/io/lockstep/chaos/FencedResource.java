package io.lockstep.chaos;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * A resource outside ZooKeeper that fences its writers: it accepts a write only with a token at
 * least as high as any it has accepted for that key, and refuses the rest (a stale holder's).
 */
final class FencedResource {
  private final ConcurrentMap<String, Long> highest = new ConcurrentHashMap<>();

  /**
   * Writes {@code key} with {@code token}.
   *
   * @return true if accepted, false if refused because a higher token was seen
   */
  boolean write(String key, long token) {
    boolean[] accepted = {false};
    highest.compute(
        key,
        (k, seen) -> {
          if (seen == null || token >= seen) {
            accepted[0] = true;
            return token;
          }
          return seen;
        });
    return accepted[0];
  }

  /** The highest token accepted for {@code key}, or 0. */
  long highest(String key) {
    return highest.getOrDefault(key, 0L);
  }
}

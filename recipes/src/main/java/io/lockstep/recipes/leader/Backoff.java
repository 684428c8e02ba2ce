package io.lockstep.recipes.leader;

/** The delays between failed attempts to enter the queue: doubling, bounded. Not thread-safe. */
final class Backoff {
  /** The first delay after a failed attempt. */
  static final long FIRST_MILLIS = 100;

  /** The longest delay between failed attempts. */
  static final long MAX_MILLIS = 5_000;

  private int failures; // in a row

  /** One more failure: the delay before the next attempt. */
  long next() {
    failures++;
    return Math.min(MAX_MILLIS, FIRST_MILLIS << Math.min(failures - 1, 10));
  }

  /** An attempt succeeded: the next failure starts over. */
  void reset() {
    failures = 0;
  }
}

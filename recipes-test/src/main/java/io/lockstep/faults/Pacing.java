package io.lockstep.faults;

import java.util.Random;

/**
 * How a worker's threads pace their loop: how long a hold lasts, how often it writes, how long the
 * thread rests between holds, and the budgets of its acquires (a share of them untimed).
 *
 * @param holdMinMs shortest hold (for a leader: shortest term before stepping down)
 * @param holdMaxMs longest hold
 * @param stepMs time between two fenced writes of one hold
 * @param restMinMs shortest rest between a release and the next acquire
 * @param restMaxMs longest rest
 * @param untimedPercent share of acquires without a budget, in percent
 * @param budgetMinMs smallest budget of a timed acquire
 * @param budgetMaxMs largest budget
 */
record Pacing(
    int holdMinMs,
    int holdMaxMs,
    int stepMs,
    int restMinMs,
    int restMaxMs,
    int untimedPercent,
    int budgetMinMs,
    int budgetMaxMs) {

  /** Holds of 100 to 400 ms, writes every 80 ms, short rests, budgets of 1 to 4 s. */
  static final Pacing DEFAULT = new Pacing(100, 400, 80, 10, 60, 30, 1_000, 4_000);

  /** A random hold length. */
  int hold(Random random) {
    return between(random, holdMinMs, holdMaxMs);
  }

  /** A random rest. */
  int rest(Random random) {
    return between(random, restMinMs, restMaxMs);
  }

  /** A random budget in milliseconds, or -1 for an untimed acquire. */
  int budget(Random random) {
    return random.nextInt(100) < untimedPercent ? -1 : between(random, budgetMinMs, budgetMaxMs);
  }

  String encode() {
    return holdMinMs
        + ","
        + holdMaxMs
        + ","
        + stepMs
        + ","
        + restMinMs
        + ","
        + restMaxMs
        + ","
        + untimedPercent
        + ","
        + budgetMinMs
        + ","
        + budgetMaxMs;
  }

  static Pacing decode(String text) {
    String[] f = text.split(",", -1);
    if (f.length != 8) {
      throw new IllegalArgumentException("pacing needs 8 numbers: " + text);
    }
    int[] n = new int[8];
    for (int i = 0; i < 8; i++) {
      n[i] = Integer.parseInt(f[i]);
    }
    return new Pacing(n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]);
  }

  private static int between(Random random, int min, int max) {
    return max <= min ? min : min + random.nextInt(max - min + 1);
  }
}

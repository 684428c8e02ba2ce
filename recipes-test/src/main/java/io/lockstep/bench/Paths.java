package io.lockstep.bench;

import java.util.concurrent.atomic.AtomicInteger;

/** Fresh lock paths, so that no two benchmark points share a queue. */
final class Paths {
  private static final AtomicInteger counter = new AtomicInteger();

  private Paths() {}

  /** A path under {@code /bench} that no other point of this run uses. */
  static String unique(String name) {
    return "/bench/" + name + "-" + counter.incrementAndGet();
  }
}

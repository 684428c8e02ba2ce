package io.lockstep.demo;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** Named daemon threads for the demo's pools, so that a stuck thread never holds the JVM up. */
final class Daemons {
  private Daemons() {}

  /** A factory of daemon threads named {@code name-1}, {@code name-2}... */
  static ThreadFactory named(String name) {
    AtomicInteger number = new AtomicInteger();
    return task -> {
      Thread thread = new Thread(task, name + "-" + number.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }
}

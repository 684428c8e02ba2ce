package io.lockstep.recipes.internal;

import org.jetbrains.lincheck.Lincheck;

/**
 * What the engine's Lincheck model checks share: the run, plain checks (AssertJ's assertions do not
 * run under Lincheck's instrumentation) and threads started and joined together.
 */
public final class ModelCheck {
  /**
   * Schedules each model check explores: with this many, each one-line break the tests' Javadoc
   * names fails its test; more cost seconds of the serial build.
   */
  private static final int INVOCATIONS = 500;

  private ModelCheck() {}

  /** Runs {@code scenario} under the model checker, once per schedule it explores. */
  public static void explore(Runnable scenario) {
    Lincheck.runConcurrentTest(INVOCATIONS, scenario);
  }

  /** Fails the schedule with {@code otherwise} unless {@code holds}. */
  public static void check(boolean holds, String otherwise) {
    if (!holds) {
      throw new AssertionError(otherwise);
    }
  }

  /** Starts each of {@code parts} in a thread of its own, and waits for all of them. */
  public static void inParallel(Runnable... parts) {
    Thread[] threads = new Thread[parts.length];
    for (int i = 0; i < parts.length; i++) {
      threads[i] = new Thread(parts[i]);
      threads[i].start();
    }
    for (Thread thread : threads) {
      try {
        thread.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }
}

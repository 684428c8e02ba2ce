package io.lockstep.bench;

import io.lockstep.recipes.locks.LocalHandoff;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.Library;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiFunction;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

/**
 * The series of the contention section: whose mutex, and how it is built. {@link #CURATOR} is the
 * baseline every other series is divided by; the tables, the chart and the goals take a column, a
 * line and a row per constant, so a new series is one more constant here.
 *
 * <p>A series that hands off locally ({@link #LOCKSTEP_LOCAL_HANDOFF}) runs only where threads
 * share a client ({@link #in}): with a client per thread each thread is a process of its own, its
 * cohort has one member, and the series would be plain Lockstep again.
 */
enum Contender {
  /** Curator's {@code InterProcessMutex}: the baseline. */
  CURATOR("Curator", Library.CURATOR, false, InterProcessMutex::new),
  /** Lockstep's {@code ReentrantMutex}, as a drop-in replacement builds it. */
  LOCKSTEP("Lockstep", Library.LOCKSTEP, false, ReentrantMutex::new),
  /**
   * Lockstep's {@code ReentrantMutex} with local handoff at the default bound: the lock objects of
   * one client share one node in the queue and take turns in memory.
   */
  LOCKSTEP_LOCAL_HANDOFF(
      "Lockstep, local handoff",
      Library.LOCKSTEP,
      true,
      (client, path) ->
          ReentrantMutex.builder(client, path)
              .localHandoff(LocalHandoff.DEFAULT_MAX_IN_A_ROW)
              .build());

  private final String label;
  private final Library library;
  private final boolean localHandoff;
  private final BiFunction<CuratorFramework, String, InterProcessLock> factory;

  Contender(
      String label,
      Library library,
      boolean localHandoff,
      BiFunction<CuratorFramework, String, InterProcessLock> factory) {
    this.label = label;
    this.library = library;
    this.localHandoff = localHandoff;
    this.factory = factory;
  }

  /** Whether the lock objects of one client share one place in the queue. */
  boolean localHandoff() {
    return localHandoff;
  }

  /** The name in tables, the chart's legend and the goals: "Lockstep, local handoff". */
  String label() {
    return label;
  }

  /** Whose library the series runs. */
  Library library() {
    return library;
  }

  /** A new lock of this series on {@code path}; nothing is sent until it is acquired. */
  InterProcessLock newLock(CuratorFramework client, String path) {
    return factory.apply(client, path);
  }

  /** Every series run in {@code mode} but the baseline, in declaration order. */
  static List<Contender> challengers(ContentionScenario.ClientMode mode) {
    return in(mode).stream().filter(c -> c != CURATOR).toList();
  }

  /**
   * The series run in {@code mode}, in declaration order: all of them with one shared client; with
   * a client per thread, those without local handoff, which would equal plain Lockstep there.
   */
  static List<Contender> in(ContentionScenario.ClientMode mode) {
    return Arrays.stream(values())
        .filter(c -> mode == ContentionScenario.ClientMode.SHARED || !c.localHandoff)
        .toList();
  }
}

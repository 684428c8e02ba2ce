package io.lockstep.bench;

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
 * line and a row per constant, so a new series is one more constant here, for instance, once
 * Lockstep has local handoff:
 *
 * <pre>{@code
 * LOCKSTEP_LOCAL_HANDOFF("Lockstep, local handoff", Library.LOCKSTEP,
 *     (client, path) -> ReentrantMutex.builder(client, path).localHandoff(8).build()),
 * }</pre>
 */
enum Contender {
  /** Curator's {@code InterProcessMutex}: the baseline. */
  CURATOR("Curator", Library.CURATOR, InterProcessMutex::new),
  /** Lockstep's {@code ReentrantMutex}, as a drop-in replacement builds it. */
  LOCKSTEP("Lockstep", Library.LOCKSTEP, ReentrantMutex::new);

  private final String label;
  private final Library library;
  private final BiFunction<CuratorFramework, String, InterProcessLock> factory;

  Contender(
      String label,
      Library library,
      BiFunction<CuratorFramework, String, InterProcessLock> factory) {
    this.label = label;
    this.library = library;
    this.factory = factory;
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

  /** Every series but the baseline, in declaration order. */
  static List<Contender> challengers() {
    return Arrays.stream(values()).filter(c -> c != CURATOR).toList();
  }
}

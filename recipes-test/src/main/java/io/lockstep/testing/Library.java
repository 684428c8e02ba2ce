package io.lockstep.testing;

import io.lockstep.recipes.locks.MultiMutex;
import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;

/**
 * The two implementations of every {@link Recipe} that benchmarks, the demo and the tests compare:
 * Curator's lock recipes and ours. Each builds its locks from {@link LockPart}s, so that one
 * description of a lock gives the same lock in either library.
 */
public enum Library {
  /** Apache Curator's recipes ({@code org.apache.curator.framework.recipes.locks}). */
  CURATOR("Curator"),
  /** Lockstep's recipes ({@code io.lockstep.recipes.locks}). */
  LOCKSTEP("Lockstep");

  private final String label;

  Library(String label) {
    this.label = label;
  }

  /** The name shown in tables, charts and reports. */
  public String label() {
    return label;
  }

  /**
   * Whether this library's locks fence their holders' writes (fencing tokens, ownership checks) and
   * report loss: Lockstep's do, Curator's do not.
   */
  public boolean fenced() {
    return this == LOCKSTEP;
  }

  /** A new single-path lock on {@code part}; nothing is sent to ZooKeeper until it is acquired. */
  public InterProcessLock lock(CuratorFramework client, LockPart part) {
    String path = part.path();
    boolean curator = this == CURATOR;
    return switch (part.mode()) {
      case MUTEX ->
          curator ? new InterProcessMutex(client, path) : new ReentrantMutex(client, path);
      case NON_REENTRANT_MUTEX ->
          curator
              ? new InterProcessSemaphoreMutex(client, path)
              : new NonReentrantMutex(client, path);
      case READ ->
          curator
              ? new InterProcessReadWriteLock(client, path).readLock()
              : new ReadWriteMutex(client, path).readLock();
      case WRITE ->
          curator
              ? new InterProcessReadWriteLock(client, path).writeLock()
              : new ReadWriteMutex(client, path).writeLock();
      case MULTI, MULTI_MIXED -> throw new IllegalArgumentException("not a part: " + part);
    };
  }

  /**
   * A new multi-lock over {@code parts}, each a mutex or one side of a read-write lock.
   *
   * <p>Lockstep's {@code MultiMutex} enqueues in every path in one transaction, in whatever order
   * the parts are listed. Curator's {@code InterProcessMultiLock} takes its locks one after
   * another, so two multi-locks listing shared paths in different orders could deadlock: its parts
   * are taken in path order, one global order for every multi-lock.
   *
   * @throws IllegalArgumentException if a part is a non-reentrant mutex (neither library's
   *     multi-lock has that mode)
   */
  public InterProcessLock multiLock(CuratorFramework client, List<LockPart> parts) {
    if (parts.stream().anyMatch(part -> part.mode() == Recipe.NON_REENTRANT_MUTEX)) {
      throw new IllegalArgumentException("a multi-lock has no non-reentrant part: " + parts);
    }
    if (this == LOCKSTEP) {
      MultiMutex.Builder builder = MultiMutex.builder(client);
      for (LockPart part : parts) {
        switch (part.mode()) {
          case READ -> builder.read(part.path());
          case WRITE -> builder.write(part.path());
          default -> builder.mutex(part.path());
        }
      }
      return builder.build();
    }
    List<InterProcessLock> locks = new ArrayList<>();
    parts.stream()
        .sorted(Comparator.comparing(LockPart::path))
        .forEach(part -> locks.add(lock(client, part)));
    return new InterProcessMultiLock(locks);
  }

  /**
   * How a multi-lock over {@code parts} is called in this library, for reports: {@code MultiMutex
   * (2 mutex + 2 write)}, {@code InterProcessMultiLock (4)}.
   */
  public String describeMultiLock(List<LockPart> parts) {
    if (this == CURATOR) {
      return "InterProcessMultiLock (" + parts.size() + ")";
    }
    Map<Recipe, Long> byMode = new LinkedHashMap<>();
    parts.forEach(part -> byMode.merge(part.mode(), 1L, Long::sum));
    return "MultiMutex ("
        + byMode.entrySet().stream()
            .map(e -> e.getValue() + " " + e.getKey().name().toLowerCase(Locale.ROOT))
            .collect(Collectors.joining(" + "))
        + ")";
  }
}

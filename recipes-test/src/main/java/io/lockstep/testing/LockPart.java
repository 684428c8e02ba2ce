package io.lockstep.testing;

import java.util.Objects;

/**
 * One lock path and how a lock takes it: as a mutex, a non-reentrant mutex, or one side of a
 * read-write lock. A single-path lock has one part, a multi-lock one per path.
 *
 * @param mode {@link Recipe#MUTEX}, {@link Recipe#NON_REENTRANT_MUTEX}, {@link Recipe#READ} or
 *     {@link Recipe#WRITE}
 * @param path the lock path
 */
public record LockPart(Recipe mode, String path) {
  /**
   * Checks the components.
   *
   * @throws IllegalArgumentException if {@code mode} is a multi-lock
   */
  public LockPart {
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(path, "path");
    if (mode.isMulti()) {
      throw new IllegalArgumentException("a part is a single path: " + mode);
    }
  }

  /** A mutex on {@code path}. */
  public static LockPart mutex(String path) {
    return new LockPart(Recipe.MUTEX, path);
  }

  /** The read side of the read-write lock on {@code path}. */
  public static LockPart read(String path) {
    return new LockPart(Recipe.READ, path);
  }

  /** The write side of the read-write lock on {@code path}. */
  public static LockPart write(String path) {
    return new LockPart(Recipe.WRITE, path);
  }

  /** Whether other shared holders may hold the path at the same time (a read lock). */
  public boolean shared() {
    return mode == Recipe.READ;
  }
}

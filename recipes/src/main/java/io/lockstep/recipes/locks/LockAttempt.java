package io.lockstep.recipes.locks;

import java.util.Objects;

/**
 * One attempt to acquire one lock, as a {@link LockObserver} sees it: what every callback about the
 * attempt, and the hold it may become, names.
 *
 * @param id a number unique to this attempt within the process, to tell attempts apart
 * @param path the lock's path (for a multi-lock, its paths in brackets)
 * @param recipe the recipe: {@code ReentrantMutex}, {@code NonReentrantMutex}, {@code
 *     ReadWriteMutex.ReadLock}, {@code ReadWriteMutex.WriteLock} or {@code MultiMutex}
 */
public record LockAttempt(long id, String path, String recipe) {
  /**
   * Checks the components.
   *
   * @param id the attempt's number
   * @param path the lock's path
   * @param recipe the recipe's name
   * @throws NullPointerException if {@code path} or {@code recipe} is null
   */
  public LockAttempt {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(recipe, "recipe");
  }
}

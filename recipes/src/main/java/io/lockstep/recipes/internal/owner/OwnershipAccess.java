package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.locks.FencedLock;
import java.util.Objects;
import java.util.function.Function;

/**
 * How the integration packages reach the {@link Ownership} of one of Lockstep's lock objects, which
 * the API keeps to itself: the locks package installs the accessor when its lock class loads (the
 * JDK's "shared secrets" pattern). Only for code of this module; the package is not exported.
 */
public final class OwnershipAccess {
  private static volatile Function<FencedLock, Ownership> accessor;

  private OwnershipAccess() {}

  /** Called once, by the locks package. */
  public static void install(Function<FencedLock, Ownership> installed) {
    accessor = Objects.requireNonNull(installed, "installed");
  }

  /**
   * The holds of {@code lock}.
   *
   * @throws IllegalArgumentException if {@code lock} is not one of Lockstep's single-engine locks
   */
  public static Ownership of(FencedLock lock) {
    return accessor.apply(lock); // installed: a FencedLock of ours exists, so its class has loaded
  }
}

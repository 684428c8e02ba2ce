package io.lockstep.recipes.locks;

import java.util.Objects;

/**
 * A {@link LockDriver}'s verdict on one reading of the queue: either our node holds the lock, or it
 * must wait and watch one other node.
 *
 * @param holds whether our node holds the lock
 * @param watchNode the name (not the path) of the node to watch when not holding, else null
 */
public record LockDecision(boolean holds, String watchNode) {
  private static final LockDecision HOLD = new LockDecision(true, null);

  /**
   * Checks that exactly one of the two outcomes is described.
   *
   * @param holds whether our node holds the lock
   * @param watchNode the node to watch when not holding, else null
   * @throws IllegalArgumentException if {@code holds} is true with a node to watch, or false
   *     without
   */
  public LockDecision {
    if (holds == (watchNode != null)) {
      throw new IllegalArgumentException(
          "watchNode must be null when holds is true, and a node name otherwise: " + watchNode);
    }
  }

  /**
   * Our node holds the lock.
   *
   * @return the decision to hold
   */
  public static LockDecision hold() {
    return HOLD;
  }

  /**
   * Our node must wait until the named node is deleted or changes.
   *
   * @param node the name of a child of the lock path, not our own
   * @return the decision to watch {@code node}
   * @throws NullPointerException if {@code node} is null
   */
  public static LockDecision watch(String node) {
    return new LockDecision(false, Objects.requireNonNull(node, "node"));
  }
}

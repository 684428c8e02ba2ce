package io.lockstep.recipes.internal.queue;

import java.util.UUID;

/**
 * Curator's "protected" node names: {@code _c_<uuid>-<lockName><sequence>}. The UUID lets a client
 * find its own node after a create whose answer was lost.
 */
public final class NodeNames {
  private static final String PROTECTED_MARKER = "_c_";

  private NodeNames() {}

  /** A fresh protection id. */
  public static String newProtectionId() {
    return UUID.randomUUID().toString();
  }

  /**
   * Whether {@code name} is a lock node: a protected name, {@code _c_<uuid>-...}, as every lock
   * node of Lockstep and of Curator's recipes is (Curator creates them all with protection). Any
   * other child of a lock directory (a lock directory nested under it, a key of {@code KeyedLocks},
   * an operator's node) neither holds nor blocks the lock.
   */
  public static boolean isLockNode(String name) {
    return name.startsWith(PROTECTED_MARKER);
  }

  /** The start of every node name created with the given protection id. */
  public static String prefix(String protectionId) {
    return PROTECTED_MARKER + protectionId + "-";
  }
}

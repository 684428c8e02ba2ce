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

  /** The start of every node name created with the given protection id. */
  public static String prefix(String protectionId) {
    return PROTECTED_MARKER + protectionId + "-";
  }
}

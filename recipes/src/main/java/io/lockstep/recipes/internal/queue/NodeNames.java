package io.lockstep.recipes.internal.queue;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.curator.utils.ZKPaths;

/**
 * Curator's "protected" node names: {@code _c_<uuid>-<lockName><sequence>}. The UUID lets a client
 * find its own node after a create whose answer was lost.
 */
public final class NodeNames {
  private static final String PROTECTED_MARKER = "_c_";

  /** A protection id is a UUID's text: 36 characters. */
  private static final int PROTECTION_ID_LENGTH = 36;

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

  /**
   * The start of a protected node's name, {@code _c_<uuid>-}, shared by every node created with its
   * protection id; null if {@code nodeName} is not protected.
   */
  public static String prefixOf(String nodeName) {
    int length = prefixLength(nodeName, 0);
    return length < 0 ? null : nodeName.substring(0, length);
  }

  /**
   * How long the protected prefix ({@link #prefixOf}) of the node name starting at {@code
   * nameStart} in {@code path} is, or -1 if the name is not protected; nothing is copied.
   */
  public static int prefixLength(String path, int nameStart) {
    int end = PROTECTED_MARKER.length() + PROTECTION_ID_LENGTH + 1;
    return path.startsWith(PROTECTED_MARKER, nameStart)
            && path.length() - nameStart > end
            && path.charAt(nameStart + end - 1) == '-'
        ? end
        : -1;
  }

  /** Whether {@code name} is the name starting at {@code nameStart} in {@code path}. */
  public static boolean isNameOf(String path, int nameStart, String name) {
    return name.length() == path.length() - nameStart
        && path.regionMatches(nameStart, name, 0, name.length());
  }

  /**
   * The last segment of a lock node's path: its name. The path is the server's or was checked when
   * the lock was made, so it is not validated again (Curator's {@code ZKPaths.getNodeFromPath}
   * would, copying it into a char array on every read of a queue).
   */
  public static String nameOf(String path) {
    return path.substring(path.lastIndexOf('/') + 1);
  }

  /**
   * The path of a protected node in {@code parent}, as Curator's protected mode names it: {@code
   * <parent>/_c_<protectionId><nameEnd>}, built in one concatenation (nothing kept per lock).
   *
   * @param nameEnd the rest of the name after the protection id ({@link #protectedNameEnd})
   */
  public static String protectedPath(String parent, String protectionId, String nameEnd) {
    return parent.endsWith("/")
        ? parent + PROTECTED_MARKER + protectionId + nameEnd
        : parent + "/" + PROTECTED_MARKER + protectionId + nameEnd;
  }

  /**
   * The rest of a protected node's name after its protection id: {@code -<name>}; one string for
   * every lock of that name.
   */
  public static String protectedNameEnd(String name) {
    return ("-" + name).intern();
  }

  /** The start of every node name created with the given protection id. */
  public static String prefix(String protectionId) {
    return PROTECTED_MARKER + protectionId + "-";
  }

  /**
   * The paths of the children whose names start with {@code prefix} (a protection id's): every one,
   * or only the first of each queue.
   *
   * @param lockPaths the queues' paths, in the order of {@code children}
   * @param children the children read from each queue
   */
  public static List<String> withPrefix(
      List<String> lockPaths, List<List<String>> children, String prefix, boolean firstOfEach) {
    List<String> found = new ArrayList<>();
    for (int i = 0; i < lockPaths.size(); i++) {
      for (String child : children.get(i)) {
        if (child.startsWith(prefix)) {
          found.add(ZKPaths.makePath(lockPaths.get(i), child));
          if (firstOfEach) {
            break;
          }
        }
      }
    }
    return found;
  }
}

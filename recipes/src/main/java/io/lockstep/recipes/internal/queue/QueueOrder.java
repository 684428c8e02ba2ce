package io.lockstep.recipes.internal.queue;

import io.lockstep.recipes.locks.LockDriver;
import io.lockstep.recipes.locks.LockException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;

/** Sorts the children of a lock path the way a driver orders them. */
public final class QueueOrder {
  private QueueOrder() {}

  /**
   * The children in queue order: by the driver's sort key, ties broken by the full name. Each key
   * is computed once, so a long queue costs one key per child and a sort of short strings.
   */
  public static List<String> sort(List<String> children, LockDriver driver) {
    String[][] keyed = new String[children.size()][];
    for (int i = 0; i < keyed.length; i++) {
      String name = children.get(i);
      keyed[i] = new String[] {driver.sortKey(name), name};
    }
    Arrays.sort(
        keyed,
        Comparator.<String[], String>comparing(pair -> pair[0]).thenComparing(pair -> pair[1]));
    List<String> sorted = new ArrayList<>(keyed.length);
    for (String[] pair : keyed) {
      sorted.add(pair[1]);
    }
    return Collections.unmodifiableList(sorted);
  }

  /** The children that are lock nodes ({@link NodeNames#isLockNode}), in their order. */
  public static List<String> lockNodes(List<String> children) {
    for (String name : children) {
      if (!NodeNames.isLockNode(name)) {
        return children.stream().filter(NodeNames::isLockNode).toList();
      }
    }
    return children;
  }

  /**
   * Where {@link LockDriver#sortKey(String)}'s default key starts in {@code nodeName}: at
   * ZooKeeper's ten-digit sequence number when the name ends with the lock name and one, else after
   * the last occurrence of the lock name, else at 0 (the whole name).
   */
  public static int keyStart(String nodeName, String lockName) {
    return keyStart(nodeName, 0, lockName);
  }

  /**
   * As {@link #keyStart(String, String)}, for the node name that starts at {@code nameStart} in
   * {@code path}, read in place; the index is in {@code path}.
   */
  static int keyStart(String path, int nameStart, String lockName) {
    int sequenceStart = path.length() - 10; // ZooKeeper's sequence suffix: ten digits
    if (sequenceStart - nameStart >= lockName.length()
        && path.startsWith(lockName, sequenceStart - lockName.length())
        && digitsFrom(path, sequenceStart)) {
      return sequenceStart;
    }
    int at = path.lastIndexOf(lockName);
    return at < nameStart ? nameStart : at + lockName.length();
  }

  /**
   * Compares two names as {@link #sort} orders them, by the keys starting at {@code aStart} and
   * {@code bStart}, ties broken by the full name, without cutting the keys out.
   */
  static int compareByKey(String a, int aStart, String b, int bStart) {
    return compareByKey(a, aStart, b, bStart, 0);
  }

  /**
   * As {@link #compareByKey(String, int, String, int)}, for a {@code b} whose name starts at {@code
   * bNameStart} (a path: the tie is broken by the name alone, read in place).
   */
  static int compareByKey(String a, int aStart, String b, int bStart, int bNameStart) {
    int byKey = compareFrom(a, aStart, b, bStart);
    return byKey != 0 ? byKey : compareFrom(a, 0, b, bNameStart);
  }

  /** The text of {@code a} from {@code aStart} against that of {@code b} from {@code bStart}. */
  private static int compareFrom(String a, int aStart, String b, int bStart) {
    int aLength = a.length() - aStart;
    int bLength = b.length() - bStart;
    int common = Math.min(aLength, bLength);
    for (int i = 0; i < common; i++) {
      char x = a.charAt(aStart + i);
      char y = b.charAt(bStart + i);
      if (x != y) {
        return x - y;
      }
    }
    return aLength - bLength;
  }

  private static boolean digitsFrom(String text, int start) {
    for (int i = start; i < text.length(); i++) {
      if (text.charAt(i) < '0' || text.charAt(i) > '9') {
        return false;
      }
    }
    return true;
  }

  /**
   * Reads a lock path's children and returns the lock nodes accepted by {@code filter}, in queue
   * order, as full paths. A lock path that does not exist has no participants.
   */
  public static List<String> participants(
      CuratorFramework client, String path, LockDriver driver, Predicate<String> filter) {
    List<String> children;
    try {
      children = client.getChildren().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      return List.of();
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new LockException("Could not read the participants of lock " + path, e);
    }
    return sort(lockNodes(children), driver).stream()
        .filter(filter)
        .map(name -> ZKPaths.makePath(path, name))
        .collect(Collectors.toUnmodifiableList());
  }
}

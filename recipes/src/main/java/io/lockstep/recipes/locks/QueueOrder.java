package io.lockstep.recipes.locks;

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
final class QueueOrder {
  private QueueOrder() {}

  /**
   * The children in queue order: by the driver's sort key, ties broken by the full name. Each key
   * is computed once, so a long queue costs one key per child and a sort of short strings.
   */
  static List<String> sort(List<String> children, LockDriver driver) {
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

  /**
   * Reads a lock path's children and returns those accepted by {@code filter}, in queue order, as
   * full paths. A lock path that does not exist has no participants.
   */
  static List<String> participants(
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
    return sort(children, driver).stream()
        .filter(filter)
        .map(name -> ZKPaths.makePath(path, name))
        .collect(Collectors.toUnmodifiableList());
  }
}

package io.lockstep.recipes.boot;

import io.lockstep.recipes.boot.LocksEndpoint.LockReport;
import io.lockstep.recipes.boot.LocksEndpoint.NodeReport;
import io.lockstep.recipes.boot.LocksEndpoint.RootReport;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockInspector;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;

/**
 * One listing of the locks under a root, depth first in name order: each path is inspected, and its
 * children that are not nodes of its queue (nor hold them, as a semaphore's {@code leases} does)
 * are walked in turn, up to a number of paths.
 */
final class LockWalk {
  private final CuratorFramework client;
  private final LockInspector inspector;
  private final int maxPaths;

  LockWalk(CuratorFramework client, LockInspector inspector, int maxPaths) {
    this.client = client;
    this.inspector = inspector;
    this.maxPaths = maxPaths;
  }

  RootReport walk(String root) {
    List<LockReport> locks = new ArrayList<>();
    Deque<String> pending = new ArrayDeque<>();
    pending.push(root);
    int read = 0;
    try {
      while (!pending.isEmpty() && read < maxPaths) {
        String path = pending.pop();
        read++;
        List<String> children = children(path);
        LockInspector.Snapshot snapshot = inspector.inspect(path);
        List<String> queue = new ArrayList<>();
        if (!snapshot.holders().isEmpty() || !snapshot.waiters().isEmpty()) {
          locks.add(
              new LockReport(
                  path, nodes(snapshot.holders(), queue), nodes(snapshot.waiters(), queue)));
        }
        for (int i = children.size() - 1; i >= 0; i--) { // pushed in reverse: popped in order
          String child = ZKPaths.makePath(path, children.get(i));
          if (queue.stream()
              .noneMatch(node -> node.equals(child) || node.startsWith(child + "/"))) {
            pending.push(child);
          }
        }
      }
    } catch (LockException e) {
      return new RootReport(root, locks, true, e.getMessage()); // incomplete
    }
    return new RootReport(root, locks, !pending.isEmpty(), null);
  }

  /** The entries as reported, their nodes noted in {@code queue}. */
  private static List<NodeReport> nodes(List<LockInspector.Entry> entries, List<String> queue) {
    List<NodeReport> nodes = new ArrayList<>();
    for (LockInspector.Entry entry : entries) {
      queue.add(entry.node());
      nodes.add(
          new NodeReport(
              entry.node(),
              entry.mode().name(),
              "0x" + Long.toHexString(entry.sessionId()),
              entry.age().toMillis()));
    }
    return nodes;
  }

  private List<String> children(String path) {
    try {
      List<String> children = new ArrayList<>(client.getChildren().forPath(path));
      children.sort(null);
      return children;
    } catch (KeeperException.NoNodeException gone) {
      return List.of();
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new LockException("Could not list the children of " + path + ": " + e, e);
    }
  }
}

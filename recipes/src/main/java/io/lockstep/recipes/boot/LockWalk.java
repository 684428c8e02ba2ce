package io.lockstep.recipes.boot;

import io.lockstep.recipes.boot.LocksEndpoint.LockReport;
import io.lockstep.recipes.boot.LocksEndpoint.NodeReport;
import io.lockstep.recipes.boot.LocksEndpoint.RootReport;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockInspector;
import java.util.ArrayList;
import java.util.List;

/**
 * One listing of the locks under a root, for the endpoint: {@link LockInspector#inspectTree(String,
 * int)} bounded by the endpoint's number of paths, and its snapshots as the endpoint reports them.
 */
final class LockWalk {
  private final LockInspector inspector;
  private final int maxPaths;

  LockWalk(LockInspector inspector, int maxPaths) {
    this.inspector = inspector;
    this.maxPaths = maxPaths;
  }

  RootReport walk(String root) {
    LockInspector.Tree tree;
    try {
      tree = inspector.inspectTree(root, maxPaths);
    } catch (LockException e) {
      return new RootReport(root, List.of(), true, e.getMessage()); // incomplete
    }
    List<LockReport> locks = new ArrayList<>(tree.locks().size());
    for (LockInspector.Snapshot lock : tree.locks()) {
      locks.add(new LockReport(lock.path(), nodes(lock.holders()), nodes(lock.waiters())));
    }
    return new RootReport(root, locks, !tree.complete(), null);
  }

  /** The entries as reported. */
  private static List<NodeReport> nodes(List<LockInspector.Entry> entries) {
    List<NodeReport> nodes = new ArrayList<>(entries.size());
    for (LockInspector.Entry entry : entries) {
      nodes.add(
          new NodeReport(
              entry.node(),
              entry.mode().name(),
              "0x" + Long.toHexString(entry.sessionId()),
              entry.age().toMillis()));
    }
    return nodes;
  }
}

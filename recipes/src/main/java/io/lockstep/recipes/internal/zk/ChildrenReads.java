package io.lockstep.recipes.internal.zk;

import io.lockstep.recipes.internal.zk.ZkRequests.ChildrenAnswer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/**
 * The two ways {@link ZkRequests} reads the children of lock paths, sent once on a handle: one
 * {@code getChildren} with its stat for one path, one read-only {@code multi} for several. A path
 * that does not exist has no children.
 */
final class ChildrenReads {
  private ChildrenReads() {}

  /**
   * A plain {@code getChildren} of {@code zkPath} ({@code path} as the client names it), optionally
   * leaving a child watch.
   */
  static void ofOne(
      ZooKeeper zk, String zkPath, String path, Watcher watcher, ChildrenAnswer answer) {
    zk.getChildren(
        zkPath,
        watcher,
        (rc, p, ctx, children, stat) -> {
          if (rc == Code.OK.intValue()) {
            answer.answered(List.of(children), zk.getSessionId(), stat.getPzxid(), null);
          } else if (rc == Code.NONODE.intValue()) {
            answer.answered(List.of(List.of()), zk.getSessionId(), 0, null);
          } else {
            answer.answered(null, 0, 0, KeeperException.create(Code.get(rc), path));
          }
        },
        null);
  }

  /**
   * One read-only {@code multi}: each path's children, then its stat (for the pzxid); {@code toZk}
   * names each path as ZooKeeper does.
   */
  static void ofSeveral(
      ZooKeeper zk, List<String> paths, UnaryOperator<String> toZk, ChildrenAnswer answer) {
    // A read-only multi has no getChildren2, and a stat read after the children is at least as
    // recent as they are.
    List<Op> ops = new ArrayList<>(2 * paths.size());
    for (String path : paths) {
      ops.add(Op.getChildren(toZk.apply(path)));
      ops.add(Op.getData(toZk.apply(path)));
    }
    zk.multi(
        ops,
        (rc, p, ctx, results) -> {
          if (results == null) {
            answer.answered(null, 0, 0, KeeperException.create(Code.get(rc)));
            return;
          }
          List<List<String>> lists = new ArrayList<>(paths.size());
          long pzxid = 0;
          for (int i = 0; i < results.size(); i++) {
            OpResult op = results.get(i);
            if (op instanceof OpResult.GetChildrenResult children) {
              lists.add(children.getChildren());
            } else if (op instanceof OpResult.GetDataResult data) {
              pzxid = Math.max(pzxid, data.getStat().getPzxid());
            } else if (((OpResult.ErrorResult) op).getErr() == Code.NONODE.intValue()) {
              if (i % 2 == 0) {
                lists.add(List.of());
              }
            } else {
              int err = ((OpResult.ErrorResult) op).getErr();
              answer.answered(null, 0, 0, KeeperException.create(Code.get(err), paths.get(i / 2)));
              return;
            }
          }
          answer.answered(lists, zk.getSessionId(), pzxid, null);
        },
        null);
  }
}

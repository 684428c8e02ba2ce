package io.lockstep.demo;

import io.lockstep.recipes.locks.LockOwnershipLostException;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.OpResult;

/**
 * A ZooKeeper transaction prepared under a lock: the lock's ownership checks first, then the
 * writes, so that it commits only while the lock's nodes exist. With Curator's recipes there are no
 * checks and the writes commit whoever holds the lock.
 */
final class FencedWrite {
  /** What became of a write. */
  enum Outcome {
    /** ZooKeeper applied it. */
    COMMITTED,
    /** ZooKeeper refused it: an ownership check failed, the lock was no longer held. */
    REFUSED,
    /** Never sent: the lock had already reported its loss. */
    SKIPPED
  }

  private final List<CuratorOp> ops; // null when skipped
  private final int checks;

  private FencedWrite(List<CuratorOp> ops, int checks) {
    this.ops = ops;
    this.checks = checks;
  }

  /** Prepares {@code writes} under {@code guard}'s ownership checks (may be no writes at all). */
  static FencedWrite prepare(Guard guard, List<CuratorOp> writes) {
    List<CuratorOp> fence;
    try {
      fence = guard.fence();
    } catch (LockOwnershipLostException lost) {
      return new FencedWrite(null, 0);
    }
    List<CuratorOp> ops = new ArrayList<>(fence);
    ops.addAll(writes);
    return new FencedWrite(ops, fence.size());
  }

  /** Whether there is anything to send. */
  boolean isEmpty() {
    return ops != null && ops.isEmpty();
  }

  /**
   * Sends the transaction.
   *
   * @throws Exception a ZooKeeper failure other than a failed ownership check
   */
  Outcome commit(CuratorFramework client) throws Exception {
    if (ops == null) {
      return Outcome.SKIPPED;
    }
    if (ops.isEmpty()) {
      return Outcome.COMMITTED;
    }
    try {
      var unused = client.transaction().forOperations(ops);
      return Outcome.COMMITTED;
    } catch (KeeperException e) {
      if (failedCheck(e)) {
        return Outcome.REFUSED;
      }
      throw e;
    }
  }

  /** Whether one of the leading check operations is the one that failed. */
  private boolean failedCheck(KeeperException e) {
    List<OpResult> results = e.getResults();
    if (results == null) {
      return false;
    }
    for (int i = 0; i < Math.min(checks, results.size()); i++) {
      if (results.get(i) instanceof OpResult.ErrorResult error
          && error.getErr() != KeeperException.Code.OK.intValue()
          && error.getErr() != KeeperException.Code.RUNTIMEINCONSISTENCY.intValue()) {
        return true;
      }
    }
    return false;
  }
}

package io.lockstep.faults;

import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.testing.FencedStore;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.api.transaction.OperationType;
import org.apache.zookeeper.KeeperException;

/**
 * One fenced write of a hold, as the chaos run makes it: the token to the store in the test process
 * for each target, then one ZooKeeper transaction setting each target's data node to the token,
 * behind the hold's ownership checks (or, with fencing off, behind none). Reports each commit
 * ({@code commit}: lock path, data node, token, commit zxid) and each write that did not commit
 * ({@code zk}: {@code REFUSED} by a check, {@code SKIPPED} as the hold knew it was lost, {@code
 * UNSURE} when the answer was lost).
 */
final class FencedWrites {
  private final WorkerSpec spec;
  private final CuratorFramework client;
  private final EventChannel events;
  private final StoreChannel store;

  FencedWrites(WorkerSpec spec, CuratorFramework client, EventChannel events, StoreChannel store) {
    this.spec = spec;
    this.client = client;
    this.events = events;
    this.store = store;
  }

  /**
   * Creates the data node of {@code target} if it is missing (a shared hold's own).
   *
   * @throws IllegalStateException if ZooKeeper failed beyond the client's retry policy
   */
  void ensureDataNode(WriteTarget target) {
    try {
      client
          .create()
          .creatingParentsIfNeeded()
          .forPath(spec.clientPath(target.dataNode()), bytes(0));
    } catch (KeeperException.NodeExistsException exists) {
      // made by an earlier worker of this group, or by the test process
    } catch (Exception e) {
      throw new IllegalStateException("could not create " + target.dataNode(), e);
    }
  }

  /** Writes {@code token} to every target, behind {@code checks} when fencing is on. */
  void write(
      String thread,
      String holdKey,
      List<WriteTarget> targets,
      long token,
      Supplier<List<CuratorOp>> checks) {
    for (WriteTarget target : targets) {
      store.write(holdKey, target.resource(), token);
    }
    FencedStore.Committed committed;
    try {
      List<CuratorOp> writes = new ArrayList<>();
      for (WriteTarget target : targets) {
        writes.add(
            client
                .transactionOp()
                .setData()
                .forPath(spec.clientPath(target.dataNode()), bytes(token)));
      }
      committed = FencedStore.prepare(spec.fencing() ? checks : List::of, writes).commit(client);
    } catch (LockOwnershipLostException lost) {
      events.send("zk", thread, holdKey, "SKIPPED");
      return;
    } catch (Exception unsure) { // connection lost, or a local handoff's fence write unanswered
      events.send("zk", thread, holdKey, "UNSURE");
      return;
    }
    switch (committed.outcome()) {
      case COMMITTED -> reportCommits(thread, holdKey, targets, token, committed.results());
      case REFUSED, SKIPPED -> events.send("zk", thread, holdKey, committed.outcome());
    }
  }

  private void reportCommits(
      String thread,
      String holdKey,
      List<WriteTarget> targets,
      long token,
      List<CuratorTransactionResult> results) {
    for (CuratorTransactionResult result : results) {
      if (result.getType() != OperationType.SET_DATA) {
        continue;
      }
      for (WriteTarget target : targets) {
        if (spec.clientPath(target.dataNode()).equals(result.getForPath())) {
          events.send(
              "commit",
              thread,
              holdKey,
              target.lockPath(),
              target.dataNode(),
              token,
              result.getResultStat().getMzxid());
        }
      }
    }
  }

  static byte[] bytes(long token) {
    return ByteBuffer.allocate(Long.BYTES).putLong(token).array();
  }
}

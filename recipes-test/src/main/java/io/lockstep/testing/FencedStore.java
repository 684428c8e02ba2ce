package io.lockstep.testing;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.OpResult;

/**
 * Where lock holders write, fenced in the two ways a fenced lock allows:
 *
 * <ul>
 *   <li>a resource outside ZooKeeper that checks fencing tokens: an instance accepts a write to a
 *       key only with a token at least as high as any it accepted for that key, and refuses the
 *       rest, a stale holder's ({@link #write(String, long)});
 *   <li>writes to ZooKeeper in one transaction behind the lock's ownership checks, so that they
 *       commit only while the lock's nodes exist ({@link #prepare(Guard, List)}). With Curator's
 *       recipes there are no checks and the writes commit whoever holds the lock.
 * </ul>
 */
public final class FencedStore {
  /** What became of a write. */
  public enum Outcome {
    /** Applied. */
    COMMITTED,
    /** Refused: a higher token was seen, or an ownership check failed (the lock was not held). */
    REFUSED,
    /** Never sent: the lock had already reported its loss. */
    SKIPPED
  }

  private final ConcurrentMap<String, Long> highest = new ConcurrentHashMap<>();

  /**
   * Writes {@code key} with {@code token} to the in-memory resource.
   *
   * @return true if accepted, false if refused because a higher token was seen
   */
  public boolean write(String key, long token) {
    boolean[] accepted = {false};
    highest.compute(
        key,
        (k, seen) -> {
          if (seen == null || token >= seen) {
            accepted[0] = true;
            return token;
          }
          return seen;
        });
    return accepted[0];
  }

  /** The highest token the in-memory resource accepted for {@code key}, or 0. */
  public long highest(String key) {
    return highest.getOrDefault(key, 0L);
  }

  /**
   * Prepares a ZooKeeper transaction of {@code writes} (possibly none) behind {@code guard}'s
   * ownership checks, taken now: commit it now, or later as a paused holder would.
   */
  public static Transaction prepare(Guard guard, List<CuratorOp> writes) {
    return prepare(guard::ownershipChecks, writes);
  }

  /**
   * Prepares a ZooKeeper transaction of {@code writes} behind the ownership checks of {@code hold}
   * (a lease, a leadership), taken now.
   */
  public static Transaction prepare(LockHold hold, List<CuratorOp> writes) {
    return prepare(hold::ownershipChecks, writes);
  }

  /**
   * Prepares a ZooKeeper transaction of {@code writes} behind the checks {@code ownership} gives,
   * taken now: a lock's, or none at all ({@code List::of}) for a writer that does not fence.
   */
  public static Transaction prepare(Supplier<List<CuratorOp>> ownership, List<CuratorOp> writes) {
    List<CuratorOp> checks;
    try {
      checks = ownership.get();
    } catch (LockOwnershipLostException lost) {
      return new Transaction(null, 0);
    }
    List<CuratorOp> ops = new ArrayList<>(checks);
    ops.addAll(writes);
    return new Transaction(ops, checks.size());
  }

  /**
   * What a committed transaction did.
   *
   * @param outcome committed, refused by an ownership check, or skipped
   * @param results ZooKeeper's results when committed, else empty
   */
  public record Committed(Outcome outcome, List<CuratorTransactionResult> results) {
    public Committed {
      results = List.copyOf(results);
    }
  }

  /** A transaction prepared under a lock, not sent yet. */
  public static final class Transaction {
    private final List<CuratorOp> ops; // null when skipped: the lock knew it was lost
    private final int checks;

    private Transaction(List<CuratorOp> ops, int checks) {
      this.ops = ops;
      this.checks = checks;
    }

    /**
     * Sends the transaction.
     *
     * @throws Exception a ZooKeeper failure other than a failed ownership check
     */
    public Committed commit(CuratorFramework client) throws Exception {
      if (ops == null) {
        return new Committed(Outcome.SKIPPED, List.of());
      }
      if (ops.isEmpty()) {
        return new Committed(Outcome.COMMITTED, List.of());
      }
      try {
        return new Committed(Outcome.COMMITTED, client.transaction().forOperations(ops));
      } catch (KeeperException e) {
        if (failedCheck(e)) {
          return new Committed(Outcome.REFUSED, List.of());
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
}

package io.lockstep.recipes.internal.queue;

import io.lockstep.recipes.locks.LockDecision;
import io.lockstep.recipes.locks.LockDriver;
import java.util.List;

/** Curator's {@code InterProcessMutex} order: the first node holds; others watch the one before. */
public enum MutexDriver implements LockDriver {
  INSTANCE;

  /** Curator's lock name for {@code InterProcessMutex} nodes. */
  static final String LOCK_NAME = "lock-";

  @Override
  public String lockName() {
    return LOCK_NAME;
  }

  /** The rank rule for one holder: the first node holds, any other watches the one before it. */
  @Override
  public LockDecision decide(List<String> sortedNodeNames, String ourNodeName) {
    return byRank(sortedNodeNames, ourNodeName, 1);
  }

  /**
   * The rank rule: the first {@code holders} nodes hold; any other watches the node {@code holders}
   * places ahead of it, whose departure is necessary for ours to hold (and, for one holder,
   * enough).
   *
   * @throws IllegalArgumentException if our node is not in the queue
   */
  static LockDecision byRank(List<String> sortedNodeNames, String ourNodeName, int holders) {
    int rank = sortedNodeNames.indexOf(ourNodeName);
    if (rank < 0) {
      throw new IllegalArgumentException(ourNodeName + " is not in the queue " + sortedNodeNames);
    }
    return rank < holders
        ? LockDecision.hold()
        : LockDecision.watch(sortedNodeNames.get(rank - holders));
  }

  /** Sequence numbers only grow, so a node created later never sorts before ours. */
  @Override
  public boolean newNodesSortLast() {
    return true;
  }
}

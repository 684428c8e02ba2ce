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

  @Override
  public LockDecision decide(List<String> sortedNodeNames, String ourNodeName) {
    int ours = sortedNodeNames.indexOf(ourNodeName);
    return ours == 0 ? LockDecision.hold() : LockDecision.watch(sortedNodeNames.get(ours - 1));
  }

  /** Sequence numbers only grow, so a node created later never sorts before ours. */
  @Override
  public boolean newNodesSortLast() {
    return true;
  }
}

package io.lockstep.recipes.internal.queue;

import io.lockstep.recipes.locks.LockDecision;
import io.lockstep.recipes.locks.LockDriver;
import java.util.List;

/**
 * Curator's {@code LeaderLatch} order: protected {@code latch-} nodes sorted by their sequence
 * suffix; the first leads, every other watches the one before it. The mutex order under another
 * lock name, decided by the generic path of {@link QueueJudge} (which sorts by {@link
 * LockDriver#sortKey}, the ten-digit suffix after {@code latch-}, as Curator's {@code
 * standardFixForSorting} does: a UUID never contains {@code latch-}).
 */
public enum LatchDriver implements LockDriver {
  INSTANCE;

  /** Curator's lock name for {@code LeaderLatch} nodes. */
  public static final String LOCK_NAME = "latch-";

  @Override
  public String lockName() {
    return LOCK_NAME;
  }

  @Override
  public LockDecision decide(List<String> sortedNodeNames, String ourNodeName) {
    return MutexDriver.INSTANCE.decide(sortedNodeNames, ourNodeName);
  }

  /** Sequence numbers only grow, so a node created later never sorts before ours. */
  @Override
  public boolean newNodesSortLast() {
    return true;
  }
}

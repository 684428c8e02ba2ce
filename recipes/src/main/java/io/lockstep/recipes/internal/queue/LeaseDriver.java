package io.lockstep.recipes.internal.queue;

import io.lockstep.recipes.locks.LockDecision;
import io.lockstep.recipes.locks.LockDriver;
import java.util.List;

/**
 * The order of a counting semaphore's {@code leases} directory, wire-compatible with Curator's
 * {@code InterProcessSemaphoreV2}: a lease is granted when fewer than {@code maxLeases} lease nodes
 * sort before it. No single node's departure is what a waiting lease needs, so {@link QueueJudge}
 * special-cases this driver: its verdict for a waiter is "wait for the directory's children to
 * change" (one child watch), not "watch node X".
 *
 * <p>Beside Curator's rule (granted when the directory has at most {@code maxLeases} children, its
 * own node included) the rank rule never over-grants: sequence numbers grow with creation, so a
 * node's rank only falls; a Curator lease granted with a count of at most {@code maxLeases} had a
 * rank below {@code maxLeases} then and ever since. Every holder, of either kind, is therefore
 * always among the first {@code maxLeases} nodes.
 */
public final class LeaseDriver implements LockDriver {
  /** Curator's lease node name. */
  public static final String LEASE_NAME = "lease-";

  /** The semaphore's directory of lease nodes, under its path. */
  public static final String LEASES = "leases";

  /**
   * The semaphore's mutex directory (Curator's {@code InterProcessMutex} layout), under its path.
   */
  public static final String LOCKS = "locks";

  /**
   * Whether the children of a path are a semaphore's: its {@code leases} and {@code locks}, or its
   * {@code leases} alone (the server reaps the {@code locks} container whenever nobody waits).
   */
  public static boolean isSemaphoreLayout(List<String> children) {
    return children.contains(LEASES) && (children.contains(LOCKS) || children.size() == 1);
  }

  /** Whether {@code child} is one of a semaphore's two directories. */
  public static boolean isSemaphorePart(String child) {
    return child.equals(LEASES) || child.equals(LOCKS);
  }

  private final int maxLeases;

  /**
   * @param maxLeases how many leases may be held at once, at least 1
   */
  public LeaseDriver(int maxLeases) {
    if (maxLeases < 1) {
      throw new IllegalArgumentException("maxLeases must be at least 1: " + maxLeases);
    }
    this.maxLeases = maxLeases;
  }

  /** How many leases may be held at once. */
  public int maxLeases() {
    return maxLeases;
  }

  @Override
  public String lockName() {
    return LEASE_NAME;
  }

  /**
   * The rank rule over a sorted list ({@link MutexDriver#byRank}), for completeness: {@link
   * QueueJudge} never asks this driver (it judges leases in one pass and waits for a change of the
   * children). A waiter names the node {@code maxLeases} places ahead, whose departure is necessary
   * but not always enough.
   */
  @Override
  public LockDecision decide(List<String> sortedNodeNames, String ourNodeName) {
    return MutexDriver.byRank(sortedNodeNames, ourNodeName, maxLeases);
  }

  /**
   * False, although sequence numbers only grow: a node that is not first may hold, so the engine's
   * shortcuts for a queue whose head alone holds (take over on the head's deletion, follow a local
   * node without reading) do not apply.
   */
  @Override
  public boolean newNodesSortLast() {
    return false;
  }

  @Override
  public String toString() {
    return "LeaseDriver[" + maxLeases + "]";
  }
}

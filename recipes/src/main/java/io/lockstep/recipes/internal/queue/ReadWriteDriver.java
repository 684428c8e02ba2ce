package io.lockstep.recipes.internal.queue;

import io.lockstep.recipes.locks.LockDecision;
import io.lockstep.recipes.locks.LockDriver;
import java.util.List;

/**
 * Curator's {@code InterProcessReadWriteLock} order: readers ({@code __READ__}) and writers ({@code
 * __WRIT__}) in one queue sorted by sequence number. A reader holds when no writer sorts before it
 * and watches the nearest writer before it otherwise; a writer holds when first and watches its
 * immediate predecessor otherwise.
 *
 * <p>A read node created by the write holder (a downgrade) carries the write node's sequence
 * number. Such a tie sorts before its writer, so the reader holds at the writer's position and
 * every other participant treats it as a reader that was already there: Curator's ties and ours
 * alike. Because a tie appears below existing waiters, new nodes do not always sort last.
 */
public enum ReadWriteDriver implements LockDriver {
  READ("__READ__"),
  WRITE("__WRIT__");

  private final String lockName;

  ReadWriteDriver(String lockName) {
    this.lockName = lockName;
  }

  @Override
  public String lockName() {
    return lockName;
  }

  /** The sequence number after either lock name; at equal numbers a reader sorts first. */
  @Override
  public String sortKey(String nodeName) {
    String sequence = suffixAfter(suffixAfter(nodeName, READ.lockName), WRITE.lockName);
    if (sequence.equals(nodeName)) {
      return nodeName;
    }
    return sequence + (isWriter(nodeName) ? '1' : '0');
  }

  @Override
  public LockDecision decide(List<String> sortedNodeNames, String ourNodeName) {
    if (this == WRITE) {
      return MutexDriver.INSTANCE.decide(sortedNodeNames, ourNodeName);
    }
    for (int i = sortedNodeNames.indexOf(ourNodeName) - 1; i >= 0; i--) {
      if (isWriter(sortedNodeNames.get(i))) {
        return LockDecision.watch(sortedNodeNames.get(i));
      }
    }
    return LockDecision.hold();
  }

  /**
   * How many nodes at the head of a sorted queue hold: the readers ahead of the first writer, and
   * that writer too if only its own downgrade's read nodes (tied to its sequence number) are ahead
   * of it. The view of an observer, such as the lock inspector, not a decision for one node.
   */
  public static int holdersAtHead(List<String> sortedNodeNames) {
    int readers = 0;
    while (readers < sortedNodeNames.size() && !isWriter(sortedNodeNames.get(readers))) {
      readers++;
    }
    if (readers == sortedNodeNames.size()) {
      return readers;
    }
    String writer = sequenceOf(sortedNodeNames.get(readers));
    for (int i = 0; i < readers; i++) {
      if (!suffixAfter(sortedNodeNames.get(i), READ.lockName).equals(writer)) {
        return readers; // other readers ahead: the writer waits for them
      }
    }
    return readers + 1; // first, or behind its own ties only: the writer holds
  }

  /** Whether {@code nodeName} is a node of Curator's read-write layout. */
  public static boolean isReadWrite(String nodeName) {
    return isReader(nodeName) || isWriter(nodeName);
  }

  /** The sequence suffix of a write node, which a downgrade's read node is tied to. */
  public static String sequenceOf(String writeNodeName) {
    return suffixAfter(writeNodeName, WRITE.lockName);
  }

  public static boolean isWriter(String nodeName) {
    return nodeName.contains(WRITE.lockName);
  }

  public static boolean isReader(String nodeName) {
    return nodeName.contains(READ.lockName);
  }

  private static String suffixAfter(String name, String lockName) {
    int at = name.lastIndexOf(lockName);
    return at < 0 ? name : name.substring(at + lockName.length());
  }
}

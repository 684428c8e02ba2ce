package io.lockstep.recipes.internal.queue;

import io.lockstep.recipes.locks.LockDecision;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.utils.ZKPaths;

/**
 * Judges one reading of the queues: a pure function of the slots, our nodes and the children read,
 * decided by each queue's {@link LockDriver}. No I/O, no state.
 */
public final class QueueJudge {
  private QueueJudge() {}

  /**
   * What one reading of the queues means for us: our nodes are missing, we hold, or we wait for
   * {@code watchPath}: a node's change (a data watch), or with {@code watchChildren} a change of
   * the children of that directory (a child watch, for a lease).
   */
  public record Verdict(
      boolean nodesMissing, String watchPath, boolean watchIsHead, boolean watchChildren) {
    static final Verdict HOLD = new Verdict(false, null, false);
    static final Verdict MISSING = new Verdict(true, null, false);

    /** A verdict that waits for a node, or holds, or is missing. */
    public Verdict(boolean nodesMissing, String watchPath, boolean watchIsHead) {
      this(nodesMissing, watchPath, watchIsHead, false);
    }

    public boolean holds() {
      return !nodesMissing && watchPath == null;
    }
  }

  /** Whether every queue read holds one child only: ours, alone. */
  public static boolean eachAlone(List<List<String>> children) {
    for (int i = 0; i < children.size(); i++) {
      if (children.get(i).size() != 1) {
        return false;
      }
    }
    return true;
  }

  /**
   * Other nodes than ours that carry our protection id, in one reading of the queues: a create of
   * ours that stands twice, found by no search (its answer lost, then searched for on a server that
   * had not seen it yet, or answered SESSIONEXPIRED under a session the server kept). Protection
   * ids are drawn afresh for every attempt, so such a node is no one else's; left alone, it would
   * stay in the queue, perhaps ahead of us, until its session ends.
   *
   * @return their full paths, in slot order; empty almost always
   */
  public static List<String> duplicates(
      List<Slot> slots, List<String> ourNodes, List<List<String>> children) {
    List<String> duplicates = List.of();
    for (int i = 0; i < slots.size() && i < ourNodes.size(); i++) {
      String ourPath = ourNodes.get(i);
      int nameStart = ourPath.lastIndexOf('/') + 1; // our name, read in place: no copy per read
      int prefixLength = NodeNames.prefixLength(ourPath, nameStart);
      if (prefixLength < 0) {
        continue;
      }
      List<String> names = children.get(i);
      for (int n = 0; n < names.size(); n++) {
        String name = names.get(n);
        if (name.regionMatches(0, ourPath, nameStart, prefixLength)
            && !NodeNames.isNameOf(ourPath, nameStart, name)) {
          if (duplicates.isEmpty()) {
            duplicates = new ArrayList<>();
          }
          duplicates.add(ZKPaths.makePath(slots.get(i).path(), name));
        }
      }
    }
    return duplicates;
  }

  /**
   * Asks each queue's driver about our node; the first queue that does not hold decides. Children
   * that are not lock nodes ({@link NodeNames#isLockNode}) are no participants.
   *
   * @param slots the queues, in the order of {@code ourNodes} and {@code children}
   * @param ourNodes our node's full path in each queue
   * @param children the children read from each queue
   * @throws IllegalStateException if a driver names a node that is not another child
   */
  public static Verdict judge(
      List<Slot> slots, List<String> ourNodes, List<List<String>> children) {
    for (int i = 0; i < slots.size(); i++) {
      Slot slot = slots.get(i);
      List<String> names = children.get(i);
      if (slot.driver() == MutexDriver.INSTANCE) {
        Verdict verdict = scanMutex(slot, ourNodes.get(i), names, slots.size() == 1);
        if (verdict != Verdict.HOLD) {
          return verdict;
        }
        continue;
      }
      if (names.size() == 1 && slot.driver() instanceof ReadWriteDriver) {
        // Alone: the head of the queue holds either side; not there: missing. Nothing to sort.
        String ourPath = ourNodes.get(i);
        if (!NodeNames.isNameOf(ourPath, ourPath.lastIndexOf('/') + 1, names.get(0))) {
          return Verdict.MISSING;
        }
        continue;
      }
      String ours = NodeNames.nameOf(ourNodes.get(i));
      if (slot.driver() instanceof LeaseDriver leases) {
        Verdict verdict = scanLeases(slot, leases.maxLeases(), ours, names);
        if (verdict != Verdict.HOLD) {
          return verdict;
        }
        continue;
      }
      if (!names.contains(ours)) {
        return Verdict.MISSING;
      }
      List<String> sorted = QueueOrder.sort(participants(names, ours), slot.driver());
      LockDecision decision = slot.driver().decide(sorted, ours);
      if (!decision.holds()) {
        String node = decision.watchNode();
        if (node.equals(ours) || !names.contains(node)) {
          throw new IllegalStateException(
              "driver "
                  + slot.driver()
                  + " asked to watch '"
                  + node
                  + "', which is not another child of "
                  + slot.path());
        }
        // Next after the head, and nothing can sort before us later: the head's deletion hands
        // the lock to us without another read of the queue.
        boolean head =
            slots.size() == 1
                && slot.driver().newNodesSortLast()
                && sorted.indexOf(node) == 0
                && sorted.indexOf(ours) == 1;
        return new Verdict(false, ZKPaths.makePath(slot.path(), node), head);
      }
    }
    return Verdict.HOLD;
  }

  /** Our node and the other lock nodes among {@code names}. */
  private static List<String> participants(List<String> names, String ours) {
    for (String name : names) {
      if (!NodeNames.isLockNode(name) && !name.equals(ours)) {
        return names.stream().filter(n -> n.equals(ours) || NodeNames.isLockNode(n)).toList();
      }
    }
    return names;
  }

  /**
   * The built-in mutex order in one pass, without sorting: our node holds when no other sorts
   * before it, and otherwise watches the last one that does (the head, if it is the only one). The
   * same verdict as sorting and asking {@link MutexDriver}, at O(N) and no allocation per child: a
   * waiter reads the whole queue at a handoff, on the client's event thread. Our node's name is
   * read in place, in {@code ourPath}.
   */
  private static Verdict scanMutex(Slot slot, String ourPath, List<String> names, boolean single) {
    String lockName = slot.driver().lockName();
    int nameStart = ourPath.lastIndexOf('/') + 1;
    int ourStart = QueueOrder.keyStart(ourPath, nameStart, lockName);
    boolean found = false;
    String predecessor = null;
    int predecessorStart = 0;
    int ahead = 0;
    for (int i = 0; i < names.size(); i++) { // by index: no iterator per read
      String name = names.get(i);
      if (NodeNames.isNameOf(ourPath, nameStart, name)) {
        found = true;
        continue;
      }
      if (!NodeNames.isLockNode(name)) {
        continue; // a nested directory or another stray child: no participant
      }
      int start = QueueOrder.keyStart(name, lockName);
      if (QueueOrder.compareByKey(name, start, ourPath, ourStart, nameStart) < 0) {
        ahead++;
        if (predecessor == null
            || QueueOrder.compareByKey(predecessor, predecessorStart, name, start) < 0) {
          predecessor = name;
          predecessorStart = start;
        }
      }
    }
    if (!found) {
      return Verdict.MISSING;
    }
    if (predecessor == null) {
      return Verdict.HOLD;
    }
    // Next after the head, and nothing can sort before us later (new mutex nodes sort last): the
    // head's deletion hands the lock to us without another read of the queue.
    return new Verdict(false, ZKPaths.makePath(slot.path(), predecessor), single && ahead == 1);
  }

  /**
   * A lease in one pass: granted when fewer than {@code maxLeases} lease nodes sort before ours (by
   * sequence number); otherwise wait for a change of the directory's children. Children that are no
   * lock nodes hold no lease and are not counted (Curator's count includes them, which only makes
   * Curator's waiters more careful).
   */
  private static Verdict scanLeases(Slot slot, int maxLeases, String ours, List<String> names) {
    String lockName = slot.driver().lockName();
    int ourStart = QueueOrder.keyStart(ours, lockName);
    boolean found = false;
    int ahead = 0;
    for (String name : names) {
      if (name.equals(ours)) {
        found = true;
      } else if (NodeNames.isLockNode(name)
          && QueueOrder.compareByKey(name, QueueOrder.keyStart(name, lockName), ours, ourStart)
              < 0) {
        ahead++;
      }
    }
    if (!found) {
      return Verdict.MISSING;
    }
    return ahead < maxLeases ? Verdict.HOLD : new Verdict(false, slot.path(), false, true);
  }
}

package io.lockstep.recipes.locks;

import java.util.List;
import org.apache.curator.utils.ZKPaths;

/**
 * Judges one reading of the queues: a pure function of the slots, our nodes and the children read,
 * decided by each queue's {@link LockDriver}. No I/O, no state.
 */
final class QueueJudge {
  private QueueJudge() {}

  /** What one reading of the queues means for us. */
  record Verdict(boolean nodesMissing, String watchPath, boolean watchIsHead) {
    static final Verdict HOLD = new Verdict(false, null, false);
    static final Verdict MISSING = new Verdict(true, null, false);

    boolean holds() {
      return !nodesMissing && watchPath == null;
    }
  }

  /**
   * Asks each queue's driver about our node; the first queue that does not hold decides.
   *
   * @param slots the queues, in the order of {@code ourNodes} and {@code children}
   * @param ourNodes our node's full path in each queue
   * @param children the children read from each queue
   * @throws IllegalStateException if a driver names a node that is not another child
   */
  static Verdict judge(List<Slot> slots, List<String> ourNodes, List<List<String>> children) {
    for (int i = 0; i < slots.size(); i++) {
      Slot slot = slots.get(i);
      String ours = ZKPaths.getNodeFromPath(ourNodes.get(i));
      List<String> names = children.get(i);
      if (!names.contains(ours)) {
        return Verdict.MISSING;
      }
      List<String> sorted = QueueOrder.sort(names, slot.driver());
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
}

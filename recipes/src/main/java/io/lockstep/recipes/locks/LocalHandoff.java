package io.lockstep.recipes.locks;

/**
 * What a lock built with {@code localHandoff} does (cohort locking): the bound's default, and the
 * rules. Not instantiable; it exists to document the option in one place.
 *
 * <p><b>Order.</b> All lock objects of one Curator client on one path built with local handoff
 * share one place in the lock's queue: one node for the process. While the process holds, its local
 * contenders take turns in memory, in arrival order; the node goes back through ZooKeeper (deleted,
 * and created again at the tail if local contenders still wait) when none waits, or after the bound
 * of handoffs in a row while another participant may wait behind it. The process learns that
 * someone waits from ZooKeeper, and a watch tells it a notification after the fact, by which time
 * tens of local handoffs can have gone by. So the hold that reaches the bound reads the queue (one
 * {@code getChildren}, sent while it holds), and the next local handoff waits for the answer: if
 * the process's node is still alone, a new run of handoffs begins; if anyone else is there, the
 * node goes back. Someone who queued just after one such read is found by the next, so another
 * process sits through at most the hold in progress and the bound's number of local handoffs after
 * its node is created: about that many more holds than with Curator's strict order.
 *
 * <p><b>Cost.</b> A local handoff sends nothing to ZooKeeper; while the process is alone, the read
 * at each bound is one request per bound's worth of handoffs. A hold that asks for its fencing
 * token or its ownership checks, other than the first of a place, first writes the node (one {@code
 * setData}): its token is that write's zxid, greater than every earlier hold's, and its checks
 * require that version of the node, which an earlier local holder's checks no longer pass.
 *
 * <p><b>What stays.</b> Other processes, Curator's included, see an ordinary node in Curator's
 * queue and exclude it as before. Loss, at-risk and the state listeners behave as without local
 * handoff: the holder hears what happens to the process's node; when it is lost, local waiters take
 * a new place. A {@link LockInspector} sees the process's node, not its local waiters. Not offered
 * for {@link ReadWriteMutex}: a downgrade ties a read node to the write node, and with a write node
 * shared by the process's writers the tied reader would hold beside the next local writer.
 * Revocation is not offered either: its request names a node, which here is the process's.
 */
public final class LocalHandoff {
  /** The default bound: local handoffs in a row while another participant may wait. */
  public static final int DEFAULT_MAX_IN_A_ROW = 8;

  private LocalHandoff() {}

  static int checkBound(int maxInARow) {
    if (maxInARow < 1) {
      throw new IllegalArgumentException("maxInARow must be at least 1: " + maxInARow);
    }
    return maxInARow;
  }
}

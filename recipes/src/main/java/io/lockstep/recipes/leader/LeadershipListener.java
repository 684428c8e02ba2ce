package io.lockstep.recipes.leader;

/**
 * Hears the leaderships of one {@link LeaderElection}: when this participant is elected, when its
 * leadership is at risk and restored, and when it ends.
 *
 * <p>Callbacks never run on ZooKeeper's event thread: they run on a Lockstep thread, one at a time
 * for the whole election, in the order things happened: {@code elected} first, then any {@code
 * atRisk}/{@code restored} pairs, then {@code lost}, before the next leadership's {@code elected}.
 * Keep them quick; a slow one delays the next callbacks of its election (a leader's work belongs on
 * its own thread). Every method does nothing unless overridden.
 */
public interface LeadershipListener {
  /**
   * This participant was elected: it is first in the queue, and {@code leadership} holds.
   *
   * @param leadership the new leadership; its {@link Leadership#fencingToken()} is its epoch
   */
  default void elected(Leadership leadership) {}

  /**
   * The connection to ZooKeeper is suspended: the leadership may already be lost and another
   * participant elected. Pause work that is not fenced.
   *
   * @param leadership the leadership at risk
   */
  default void atRisk(Leadership leadership) {}

  /**
   * The connection is back within the same session and the node is still ours: the leadership at
   * risk holds again.
   *
   * @param leadership the leadership restored
   */
  default void restored(Leadership leadership) {}

  /**
   * The leadership ended: lost ({@link Leadership#state()} is {@link
   * io.lockstep.recipes.locks.LockState#LOST}: the session expired, the node was deleted or the
   * client closed), or given up by {@link Leadership#close()} or {@link LeaderElection#close()}
   * ({@link io.lockstep.recipes.locks.LockState#RELEASED}). A started election is back in the
   * queue.
   *
   * @param leadership the leadership that ended
   */
  default void lost(Leadership leadership) {}
}

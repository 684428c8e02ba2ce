package io.lockstep.recipes.leader;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;

/**
 * One term of leadership of one participant: from its election until it is lost or given up.
 *
 * <p><b>Held and owned.</b> A leadership is owned by its handle, not by a thread: any thread may
 * use and close it. It is one hold of the election's queue, so everything a {@link LockHold} says
 * applies: its {@link #state()} follows the session, {@link #checkHeld()} throws once it is lost,
 * and {@link #ownershipChecks()} guard the caller's own ZooKeeper transactions.
 *
 * <p><b>Epochs.</b> {@link #fencingToken()} is the leadership's epoch: a ZooKeeper zxid taken when
 * the election was decided, greater than the epoch of every earlier leadership of the path, in any
 * process (Curator's leaders included, whose epoch would be taken the same way). Pass it with every
 * write the leader makes, and let the store refuse epochs lower than one it has seen.
 *
 * <pre>{@code
 * import io.lockstep.recipes.leader.LeaderElection;
 * import io.lockstep.recipes.leader.Leadership;
 *
 * LeaderElection election = ...; // a started election
 * FencedStore store = ...; // your store: refuses stale epochs (docs/getting-started.md)
 * Leadership leadership = election.awaitLeadership();
 * store.write("config", "v2", leadership.fencingToken()); // refused once a newer leader wrote
 * leadership.close(); // step down: the next participant is elected, this one queues again
 * }</pre>
 *
 * <p><b>Failures.</b> A leadership lost to session expiry or a deleted node reports {@link
 * io.lockstep.recipes.locks.LockState#LOST}; the election then queues again by itself. A paused
 * leader can outlive its session: only a fenced write is certain.
 */
public interface Leadership extends LockHold {
  /**
   * The epoch of this leadership: greater than every earlier leadership's of the path.
   *
   * @return the epoch (a zxid)
   * @throws LockOwnershipLostException if the leadership was lost
   * @throws IllegalStateException if the leadership was given up
   */
  @Override
  long fencingToken();

  /**
   * Gives up the leadership: deletes its node before returning while ZooKeeper is reachable (at
   * most the client's connection timeout; else the deletion goes on in the background), after which
   * the next participant is elected. The election, unless closed, re-enters the queue (as Curator's
   * selector does with auto-requeue). Closing again, or closing a lost leadership, does nothing
   * more, but for waiting as bounded for a deletion under way (the election's close, or a close in
   * another thread, gave the leadership up first).
   */
  @Override
  void close();
}

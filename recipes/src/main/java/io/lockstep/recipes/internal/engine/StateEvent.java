package io.lockstep.recipes.internal.engine;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What can happen to an acquisition: the columns of {@link AcquisitionState}'s table. Answers to
 * our requests carry the epoch they were asked in ({@link Stamped}) and are ignored once stale;
 * connection events and the caller's requests concern whatever epoch is current.
 */
sealed interface StateEvent {
  /** An answer to a request of one epoch. */
  sealed interface Stamped extends StateEvent {
    int epoch();
  }

  /**
   * The create succeeded: our nodes, their czxid, the session the server says owns them. {@code
   * readBehind} if the first read of the queue was sent right behind the create; {@code
   * localPredecessor} the node of this process just before ours in an append-only queue (no read
   * needed then), or null, and {@code predecessorGranted} whether that node's hold was granted.
   */
  record Created(
      int epoch,
      List<String> nodes,
      long czxid,
      long owner,
      boolean readBehind,
      String localPredecessor,
      boolean predecessorGranted)
      implements Stamped {

    /** A create answered with nothing known about the queue: read it. */
    Created(int epoch, List<String> nodes, long czxid, long owner) {
      this(epoch, nodes, czxid, owner, false, null, false);
    }
  }

  /** The create failed, or its answer was lost (the outcome is then unknown). */
  record CreateFailed(int epoch, Throwable failure) implements Stamped {}

  /** A downgrade's create was refused: the write node it is tied to is gone. */
  record TieRefused(int epoch, String writeNode) implements Stamped {}

  /**
   * After a lost create answer, the queues were read in {@code session}: {@code found} holds the
   * nodes carrying our protection id ({@code complete} if one per queue), owned by {@code owner}
   * and created at {@code czxid}; empty if the create never happened.
   */
  record OwnNodeSearched(
      int epoch, List<String> found, boolean complete, long owner, long czxid, long session)
      implements Stamped {}

  /** The search for our node failed beyond the retry policy. */
  record OwnNodeSearchFailed(int epoch, Throwable failure) implements Stamped {}

  /** A delay asked for with {@link Step.Later} is over. */
  record RetryDue(int epoch) implements Stamped {}

  /**
   * The queues were read; {@code connected}: the connection's state as the answer came; {@code
   * zxid}: the latest change of the queues' children the read reflects (their parents' largest
   * pzxid), 0 if unknown.
   */
  record QueueRead(int epoch, List<List<String>> children, boolean connected, long zxid)
      implements Stamped {}

  /**
   * The getChildren that armed our child watch on the directory we wait on (watch {@code
   * generation}, a lease) was answered: judged like a {@link QueueRead}. Still waiting, we wait for
   * that watch: a change between the previous read and this one is in this answer, so none is
   * missed. Granted, the watch fires at the directory's next change (our own delete at the latest),
   * and the hold watches its node after its grace like any grant without a child watch.
   */
  record QueueWatched(
      int epoch, int generation, List<List<String>> children, boolean connected, long zxid)
      implements Stamped {}

  /** The read sent right behind the create failed (it is not retried): read again if needed. */
  record FirstReadFailed(int epoch) implements Stamped {}

  /** A read of the queues, or of the watched node, failed beyond the retry policy. */
  record ReadFailed(int epoch, Throwable failure) implements Stamped {}

  /**
   * The watched node changed or is gone ({@code deleted}); {@code localHolderLeft} if it was the
   * node of a hold of this process (granted, so at the head), which makes us the head now; {@code
   * connected}: the client's connection as the news arrived (a grant on it is at risk without);
   * {@code zxid}: the zxid of the change, from the watch event ({@link
   * org.apache.zookeeper.WatchedEvent#getZxid()}), or 0 if unknown.
   */
  record PredecessorChanged(
      int epoch,
      int generation,
      boolean deleted,
      boolean localHolderLeft,
      boolean connected,
      long zxid)
      implements Stamped {}

  /** Our own node was read (and maybe watched): its owner, and whether it asks us to let go. */
  record OwnNodeRead(
      int epoch, Step.Purpose purpose, boolean revokeRequested, long owner, boolean connected)
      implements Stamped {}

  /** A read of our own node failed beyond the retry policy (NONODE: it is gone). */
  record OwnNodeReadFailed(int epoch, Step.Purpose purpose, Throwable failure) implements Stamped {}

  /** The data watch on our own node fired: it was deleted, or changed (a revocation request?). */
  record OwnNodeChanged(int epoch, boolean deleted) implements Stamped {}

  /** The hold has lasted its grace: watch our own node now, unless something already does. */
  record OwnNodeWatchDue(int epoch) implements Stamped {}

  /** After a reconnect: {@code stillOurs} if every node is there and owned by our session. */
  record Verified(int epoch, boolean stillOurs, boolean connected) implements Stamped {}

  /** The child watch left by our last queue read fired. */
  record QueueChanged() implements StateEvent {}

  /** A {@link QueueChanged}: it carries nothing, so one serves every watch event. */
  QueueChanged QUEUE_CHANGED = new QueueChanged();

  /** Curator's SUSPENDED or READ_ONLY. */
  record Suspended() implements StateEvent {}

  /** Curator's CONNECTED or RECONNECTED, now in {@code session}. */
  record Reconnected(long session) implements StateEvent {}

  /** Curator's LOST: the session is gone, or given up for gone. */
  record SessionLost() implements StateEvent {}

  /** The Curator client is closing: terminal. */
  record Closed() implements StateEvent {}

  /** The caller gives up waiting. */
  record Withdraw() implements StateEvent {}

  /** The holder lets go. */
  record Release() implements StateEvent {}

  /** A {@link Release}: it carries nothing, so one serves every release. */
  Release RELEASE = new Release();

  /**
   * The hold is given up as lost, for {@code reason} (its time to live ran out); {@code taken} is
   * set if it held until then, and so became LOST by this event.
   */
  record Expire(String reason, AtomicBoolean taken) implements StateEvent {}
}

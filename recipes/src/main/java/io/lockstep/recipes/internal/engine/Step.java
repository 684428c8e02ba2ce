package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.locks.LockState;
import java.util.List;

/**
 * What an {@link Acquisition} must do next: the answer of every transition of {@link
 * AcquisitionState}. Steps are plain values, so the state table can be tested without a server;
 * {@link Acquisition#run(Step)} turns each into ZooKeeper requests, timers and notifications.
 */
sealed interface Step {
  /** Nothing to do: the event was stale or changes nothing. */
  Step IGNORE = new Ignore();

  /** Nothing to do. */
  record Ignore() implements Step {}

  /** Send the create of our node in every queue, named with {@code protectionId}. */
  record Create(int epoch, String protectionId) implements Step {}

  /**
   * Create our nodes again together with their lock directories, which a create found missing (one
   * multi: the directories as containers, and the nodes).
   */
  record CreateWithDirectories(int epoch, String protectionId) implements Step {}

  /**
   * Read the queues and look for a node carrying {@code protectionId} (a create's answer was lost).
   */
  record FindOwnNode(int epoch, String protectionId) implements Step {}

  /**
   * Read the queues and let the drivers judge; {@code watchQueue}: leave a child watch (only an
   * attempt's first read of a single queue does, so that a holder granted by it hears of a change
   * of the queue at no cost, while waiters' later reads wake nobody).
   */
  record ReadQueue(int epoch, boolean watchQueue) implements Step {}

  /**
   * Watch {@code path}, the node we wait for, with getData; or with {@code children} the directory
   * whose children we wait to change, with getChildren, whose answer is judged like a read ({@link
   * StateEvent.QueueWatched}). {@code generation} names this watch.
   */
  record Watch(int epoch, int generation, String path, boolean children) implements Step {
    /** A data watch on the node we wait for. */
    Watch(int epoch, int generation, String path) {
      this(epoch, generation, path, false);
    }
  }

  /**
   * Read our own node; {@code watch}: leave a data watch on it, which tells of its deletion (and of
   * a revocation request).
   */
  record ReadOwnNode(int epoch, String path, Purpose purpose, boolean watch) implements Step {}

  /**
   * Come back after {@code delayMillis} with {@link StateEvent.OwnNodeWatchDue}: a hold that
   * nothing watches yet watches its own node once it has lasted its grace (a shorter hold never
   * does).
   */
  record WatchOwnNodeLater(int epoch, long delayMillis) implements Step {}

  /** Check after a reconnect that every node of ours is still there and owned by {@code owner}. */
  record Verify(int epoch, List<String> nodes, long owner) implements Step {}

  /** Come back after {@code delayMillis} with {@link AcquisitionState#retryDue(int)}. */
  record Later(int epoch, long delayMillis) implements Step {}

  /** The lock is ours: notify HELD (then AT_RISK if so), wake the caller, honour a revocation. */
  record Grant(long token, boolean atRisk, boolean revoke) implements Step {}

  /** Tell the holder's listeners that the hold entered {@code state}. */
  record Notify(LockState state, long token, String reason) implements Step {}

  /** A revocation was requested while held: run the revocation listener. */
  record Revoke() implements Step {}

  /** The attempt is over without a grant: withdrawn if {@code failure} is null, else failed. */
  record End(RuntimeException failure, Cleanup cleanup) implements Step {}

  /**
   * Our nodes were lost while waiting: clean up, then create anew in {@code epoch} after a delay.
   */
  record Requeue(Cleanup cleanup, int epoch, long delayMillis, String reason) implements Step {}

  /**
   * Remove what a superseded or abandoned create left; {@code answersCreate} if this is the answer
   * an ended attempt's cleanup waits for.
   */
  record Tidy(Cleanup cleanup, boolean answersCreate) implements Step {}

  /** The holder let go: delete our nodes, say RELEASED (and warn if the hold had been lost). */
  record Release(List<String> nodes, long token, String lostReason) implements Step {}

  /**
   * A hold was given up as lost by the engine (its time to live ran out): delete our nodes in the
   * background. The hold stays LOST until its holder lets go.
   */
  record Discard(List<String> nodes) implements Step {}

  /** Two steps, in order. */
  record Both(Step first, Step second) implements Step {}

  /** Why our own node is read. */
  enum Purpose {
    /** Before a revocable lock's grant: it watches its node for revocation requests. */
    CONFIRM,
    /** While held: watch our node to hear of its deletion (the hold outlasted its grace). */
    WATCH
  }

  /**
   * What an attempt leaves to remove: nodes to delete, a watch to withdraw, a protection id to
   * sweep for (a create whose outcome is unknown), and whether a create is still unanswered (its
   * answer will bring a {@link Tidy}). When the client is closed, nothing is sent: the session and
   * its nodes end with it.
   */
  record Cleanup(
      List<String> nodes,
      ArmedWatch watch,
      String sweepId,
      boolean awaitCreate,
      boolean clientClosed) {
    static final Cleanup NONE = new Cleanup(List.of(), null, null, false, false);

    static Cleanup nodes(List<String> nodes) {
      return new Cleanup(nodes, null, null, false, false);
    }

    static Cleanup sweep(String protectionId) {
      return new Cleanup(List.of(), null, protectionId, false, false);
    }

    boolean isEmpty() {
      return nodes.isEmpty() && watch == null && sweepId == null && !awaitCreate;
    }
  }

  /**
   * A predecessor watch as the state sees it: armed on the server until it fires or is withdrawn.
   */
  interface ArmedWatch {
    /** Stops listening and removes the server's watch unless another waiter still needs it. */
    void withdraw();

    /** Stops listening without a request (the session, and its watches, are gone). */
    void forget();
  }
}

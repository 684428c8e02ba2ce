package io.lockstep.recipes.internal.engine;

import java.util.List;

/**
 * One acquisition's place among this process's nodes in a single queue ({@link LocalQueues}): live
 * in the queue from its start to its end or release, its node known once created and forgotten when
 * deleted. Also tells the lock object whether its reads found a queue, which decides whether the
 * next attempt's first read leaves a child watch. A multi-lock has no such place: every method then
 * does nothing.
 */
final class QueuePlace {
  private final Acquisition owner;
  private final LockSettings context;
  private final LocalQueues localQueues;
  private final String queue; // the ZooKeeper path of the single queue, or null for a multi-lock

  QueuePlace(Acquisition owner, LockSettings context, List<String> lockPaths) {
    this.owner = owner;
    this.context = context;
    this.localQueues = context.engine().localQueues();
    this.queue = lockPaths.size() == 1 ? context.zk().toZk(lockPaths.get(0)) : null;
  }

  /** Whether the first read should leave a child watch: a single queue last found empty. */
  boolean watchFirstRead() {
    return queue != null && !context.expectsQueue();
  }

  /** The attempt is live in its queue: from its start to its end or release. */
  void active(boolean active) {
    if (queue == null) {
      return;
    }
    if (active) {
      localQueues.started(queue);
    } else {
      localQueues.ended(queue);
    }
  }

  /** Notes what an event tells of our node and of the queue. */
  void heard(StateEvent event) {
    if (queue == null) {
      return;
    }
    if (event instanceof StateEvent.Created created) {
      localQueues.note(queue, context.zk().toZk(created.nodes().get(0)), owner);
    } else if (event instanceof StateEvent.QueueRead read) {
      context.sawQueue(read.children().get(0).size() > 1);
    }
  }

  /** Our nodes are deleted, or about to be. */
  void forget(List<String> nodes) {
    if (queue != null && !nodes.isEmpty()) {
      localQueues.forget(queue, context.zk().toZk(nodes.get(0)), owner);
    }
  }
}

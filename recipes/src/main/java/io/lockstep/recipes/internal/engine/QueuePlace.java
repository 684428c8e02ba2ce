package io.lockstep.recipes.internal.engine;

import java.util.List;

/**
 * One acquisition's place among this process's nodes in a single queue ({@link LocalQueues}): live
 * in the queue from its start to its end or release, its node known once created and forgotten when
 * deleted. Also tells the lock object whether its reads found a queue, which decides whether the
 * next attempt's first read leaves a child watch. The place is named by its queue, the ZooKeeper
 * path of the acquisition's single lock path (no object per attempt); a multi-lock has none (null):
 * every method then does nothing.
 */
final class QueuePlace {
  private QueuePlace() {}

  /** The queue of an acquisition in {@code lockPaths}: a single queue's ZooKeeper path, or null. */
  static String of(LockSettings settings, List<String> lockPaths) {
    return lockPaths.size() == 1 ? settings.zk().toZk(lockPaths.get(0)) : null;
  }

  /** Whether the first read should leave a child watch: a single queue last found empty. */
  static boolean watchFirstRead(LockSettings settings, String queue) {
    return queue != null && !settings.expectsQueue();
  }

  /** The attempt is live in its queue: from its start to its end or release. */
  static void active(LockSettings settings, String queue, boolean active) {
    if (queue == null) {
      return;
    }
    if (active) {
      settings.engine().localQueues().started(queue);
    } else {
      settings.engine().localQueues().ended(queue);
    }
  }

  /** Notes what an event tells of {@code owner}'s node and of the queue. */
  static void heard(LockSettings settings, String queue, Acquisition owner, StateEvent event) {
    if (queue == null) {
      return;
    }
    if (event instanceof StateEvent.Created created) {
      String node = settings.zk().toZk(created.nodes().get(0));
      settings.engine().localQueues().note(queue, node, owner);
    } else if (event instanceof StateEvent.QueueRead read) {
      settings.sawQueue(read.children().get(0).size() > 1);
    }
  }

  /** {@code owner}'s nodes are deleted, or about to be. */
  static void forget(LockSettings settings, String queue, Acquisition owner, List<String> nodes) {
    if (queue != null && !nodes.isEmpty()) {
      String node = settings.zk().toZk(nodes.get(0));
      settings.engine().localQueues().forget(queue, node, owner);
    }
  }
}

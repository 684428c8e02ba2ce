package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.queue.QueueOrder;
import io.lockstep.recipes.internal.queue.Slot;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.apache.curator.framework.CuratorFramework;

/**
 * The queues a lock object stands in, as its {@code getParticipantNodes()} reads them and its
 * {@code toString()} names them: each queue's path and order, and which nodes of a queue are the
 * lock's (a read lock's are the readers'). Immutable.
 */
final class QueueView {
  private final String kind;
  private final List<Slot> slots;
  private final Predicate<String> members;

  private QueueView(String kind, List<Slot> slots, Predicate<String> members) {
    this.kind = kind;
    this.slots = List.copyOf(slots);
    this.members = members;
  }

  /** The queues of {@code slots}, every node of which is the lock's. */
  static QueueView of(String kind, List<Slot> slots) {
    return new QueueView(kind, slots, name -> true);
  }

  /** The queue of {@code path}, ordered by {@code driver}, whose {@code members} are the lock's. */
  static QueueView of(String kind, String path, LockDriver driver, Predicate<String> members) {
    return new QueueView(kind, Slot.of(path, driver, null).alone(), members);
  }

  /**
   * The lock's nodes of every queue, read with {@code client}, queue after queue, each in queue
   * order, as full paths.
   */
  List<String> participants(CuratorFramework client) {
    List<String> nodes = new ArrayList<>();
    for (Slot slot : slots) {
      nodes.addAll(QueueOrder.participants(client, slot.path(), slot.driver(), members));
    }
    return List.copyOf(nodes);
  }

  /** The lock's kind and its paths, as in {@code ReentrantMutex[/locks/orders]}. */
  @Override
  public String toString() {
    List<String> paths = new ArrayList<>(slots.size());
    for (Slot slot : slots) {
      paths.add(slot.path());
    }
    return kind + paths;
  }
}

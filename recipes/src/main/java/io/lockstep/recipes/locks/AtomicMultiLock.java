package io.lockstep.recipes.locks;

import io.lockstep.recipes.locks.internal.QueueOrder;
import io.lockstep.recipes.locks.internal.Slot;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;

/** {@link MultiMutex}'s atomic form: one node per path, all created in one transaction. */
final class AtomicMultiLock extends ThreadBoundFencedLock {
  private final CuratorFramework client;
  private final List<Slot> slots;

  AtomicMultiLock(CuratorFramework client, List<Slot> slots) {
    super(client, describe(slots));
    this.client = client;
    this.slots = List.copyOf(slots);
  }

  @Override
  List<Slot> slots() {
    return slots;
  }

  @Override
  public Collection<String> getParticipantNodes() {
    List<String> nodes = new ArrayList<>();
    for (Slot slot : slots) {
      nodes.addAll(QueueOrder.participants(client, slot.path(), slot.driver(), name -> true));
    }
    return List.copyOf(nodes);
  }

  private static String describe(List<Slot> slots) {
    List<String> paths = new ArrayList<>();
    for (Slot slot : slots) {
      paths.add(slot.path());
    }
    return paths.toString();
  }

  @Override
  public String toString() {
    return "MultiMutex" + describe(slots);
  }
}

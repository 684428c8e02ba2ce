package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.Enqueuer;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.owner.ThreadOwnership;
import io.lockstep.recipes.internal.queue.QueueOrder;
import io.lockstep.recipes.internal.queue.Slot;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;

/** {@link MultiMutex}'s atomic form: one node per path, all created in one transaction. */
final class AtomicMultiLock extends AbstractFencedLock {
  private final CuratorFramework client;
  private final List<Slot> slots;

  AtomicMultiLock(CuratorFramework client, List<Slot> slots) {
    super(
        ThreadOwnership.of(
            AttemptFactory.plain(LockSettings.of(client, describe(slots), "MultiMutex")), slots));
    this.client = client;
    this.slots = List.copyOf(slots);
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
    return Enqueuer.lockPaths(slots).toString();
  }

  @Override
  public String toString() {
    return "MultiMutex" + describe(slots);
  }
}

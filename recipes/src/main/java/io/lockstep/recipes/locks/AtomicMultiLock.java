package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.Enqueuer;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.owner.ThreadOwnership;
import io.lockstep.recipes.internal.queue.Slot;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;

/** {@link MultiMutex}'s atomic form: one node per path, all created in one transaction. */
final class AtomicMultiLock extends AbstractFencedLock {
  AtomicMultiLock(CuratorFramework client, List<Slot> slots) {
    super(
        ThreadOwnership.of(
            AttemptFactory.plain(LockSettings.of(client, describe(slots), "MultiMutex")), slots),
        QueueView.of("MultiMutex", slots));
  }

  private static String describe(List<Slot> slots) {
    return Enqueuer.lockPaths(slots).toString();
  }
}

package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.Enqueuer;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.owner.ThreadOwnership;
import io.lockstep.recipes.internal.queue.Slot;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;

/** {@link MultiMutex}'s atomic form: one node per path, all created in one transaction. */
final class AtomicMultiLock extends AbstractFencedLock {
  private AtomicMultiLock(CuratorFramework client, List<Slot> slots, Runnable sizeCheck) {
    super(
        ThreadOwnership.of(
            AttemptFactory.plain(LockSettings.of(client, describe(slots), "MultiMutex"), sizeCheck),
            slots),
        QueueView.of("MultiMutex", slots));
  }

  /**
   * The lock over {@code paths}, each in the mode of its driver, after checking that there is a
   * path, that each is valid, that no two are the same or lie one inside the other, and that the
   * transaction is not too large for ZooKeeper. That last check needs the client's ACL and default
   * data, which Curator resolves only for a started client: for a client not started yet (a lock
   * made as a bean before its client starts, which Curator's multi-lock allows) it runs at the
   * first acquire instead, which then throws.
   *
   * @param lockData the data of every lock node, or null for the client's default data
   */
  static AtomicMultiLock of(
      CuratorFramework client, List<String> paths, List<LockDriver> drivers, byte[] lockData) {
    if (paths.isEmpty()) {
      throw new IllegalArgumentException("paths must not be empty");
    }
    List<Slot> slots = new ArrayList<>(paths.size());
    for (int i = 0; i < paths.size(); i++) {
      String path = Arguments.path(paths.get(i), "paths[" + i + "]");
      for (int j = 0; j < i; j++) {
        checkApart(paths.get(j), j, path, i);
      }
      slots.add(Slot.of(path, drivers.get(i), lockData));
    }
    Runnable sizeCheck = EnqueueLimits.checkOnce(client, slots, "paths");
    if (client.getState() == CuratorFrameworkState.STARTED) {
      sizeCheck.run();
    }
    return new AtomicMultiLock(client, slots, sizeCheck);
  }

  private static void checkApart(String earlier, int j, String later, int i) {
    if (earlier.equals(later)) {
      throw new IllegalArgumentException(
          "paths[" + j + "] and paths[" + i + "] are the same path: " + later);
    }
    if (isInside(later, earlier) || isInside(earlier, later)) {
      throw new IllegalArgumentException(
          "paths["
              + j
              + "] ("
              + earlier
              + ") and paths["
              + i
              + "] ("
              + later
              + ") lie one inside the other; a lock path must not contain another");
    }
  }

  private static boolean isInside(String path, String ancestor) {
    return ancestor.equals("/") || path.startsWith(ancestor + "/");
  }

  private static String describe(List<Slot> slots) {
    return Enqueuer.lockPaths(slots).toString();
  }
}

package io.lockstep.recipes.leader;

import io.lockstep.recipes.internal.queue.LatchDriver;
import io.lockstep.recipes.locks.LockDriver;
import java.nio.charset.StandardCharsets;

/**
 * The nodes an election keeps under its path: Curator {@code LeaderLatch}'s or Curator {@code
 * LeaderSelector}'s. Every participant of one path must use the same layout; a {@link
 * LeaderElection} of a layout elects one leader among itself and Curator's recipe of that layout,
 * so a service can move from Curator to Lockstep one process at a time.
 */
public enum LeaderLayout {
  /**
   * Curator {@code LeaderLatch}'s nodes, the default: {@code <path>/_c_<uuid>-latch-<seq>},
   * ephemeral sequential, holding the participant id in UTF-8 (empty for the empty id).
   */
  LEADER_LATCH(LatchDriver.INSTANCE, false),

  /**
   * Curator {@code LeaderSelector}'s nodes, the queue of its {@code InterProcessMutex}: {@code
   * <path>/_c_<uuid>-lock-<seq>}, holding the participant id in UTF-8, or for the empty id the
   * client's default node data (Curator's selector leaves it to the client).
   */
  LEADER_SELECTOR(LockDriver.mutex(), true);

  private final LockDriver driver;
  private final boolean emptyIdIsDefaultData;

  LeaderLayout(LockDriver driver, boolean emptyIdIsDefaultData) {
    this.driver = driver;
    this.emptyIdIsDefaultData = emptyIdIsDefaultData;
  }

  /** The queue order and node name of this layout. */
  LockDriver driver() {
    return driver;
  }

  /** The node data for {@code id}, or null for the client's default data. */
  byte[] nodeData(String id) {
    return id.isEmpty() && emptyIdIsDefaultData ? null : id.getBytes(StandardCharsets.UTF_8);
  }
}

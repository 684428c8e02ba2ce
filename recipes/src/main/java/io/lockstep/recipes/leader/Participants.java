package io.lockstep.recipes.leader;

import io.lockstep.recipes.internal.queue.QueueOrder;
import io.lockstep.recipes.locks.LockDriver;
import io.lockstep.recipes.locks.LockException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/** Reads an election's participants as Curator's {@code getParticipants()} does. */
final class Participants {
  private Participants() {}

  /**
   * One read of the children, sorted as the layout orders them, then one read per node; a node gone
   * meanwhile is skipped, and the first one found leads. A path that does not exist has none.
   */
  static List<Participant> read(CuratorFramework client, String path, LockDriver driver) {
    List<Participant> participants = new ArrayList<>();
    for (String node : QueueOrder.participants(client, path, driver, name -> true)) {
      byte[] data;
      try {
        data = client.getData().forPath(node);
      } catch (KeeperException.NoNodeException gone) {
        continue; // left since the read of the children
      } catch (Exception e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        throw new LockException("Could not read the participants of election " + path, e);
      }
      String id = data == null ? "" : new String(data, StandardCharsets.UTF_8);
      participants.add(new Participant(id, participants.isEmpty()));
    }
    return List.copyOf(participants);
  }
}

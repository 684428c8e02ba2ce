package io.lockstep.testing;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/** Real, server-side expiry of a client's ZooKeeper session, for tests and the demo's chaos. */
public final class SessionExpiry {
  private SessionExpiry() {}

  /**
   * Expires the client's current session on the server, as a session timeout would: a second handle
   * attaches to the session and closes it, so the server deletes its ephemeral nodes at once and
   * the client is told its session expired when it next talks to the server. (Curator's {@code
   * KillSession} only simulates expiry in the client and leaves the session alive on the server
   * until it times out.)
   *
   * @param client the client whose session to end
   * @param connectString the ensemble to reach the session through
   * @return the id of the session that was ended
   * @throws IllegalStateException if no server could be reached within 10 seconds
   */
  public static long expire(CuratorFramework client, String connectString) throws Exception {
    ZooKeeper victim = client.getZookeeperClient().getZooKeeper();
    CountDownLatch attached = new CountDownLatch(1);
    ZooKeeper killer =
        new ZooKeeper(
            connectString,
            10_000,
            event -> {
              if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                attached.countDown();
              }
            },
            victim.getSessionId(),
            victim.getSessionPasswd());
    try {
      if (!attached.await(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("could not attach to the session to expire it");
      }
    } finally {
      killer.close();
    }
    return victim.getSessionId();
  }
}

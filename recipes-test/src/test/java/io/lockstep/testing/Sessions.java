package io.lockstep.testing;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/** Real, server-side session expiry for tests. */
public final class Sessions {
  private Sessions() {}

  /**
   * Expires the client's current session on the server: a second handle attaches to the session and
   * closes it, so the server deletes its ephemeral nodes at once and the client is told its session
   * expired when it next talks to the server. (Curator's {@code KillSession} only simulates expiry
   * in the client and leaves the session alive on the server until it times out.)
   */
  public static void expire(CuratorFramework client, String connectString) throws Exception {
    ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper killer =
        new ZooKeeper(
            connectString,
            10_000,
            event -> {
              if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
              }
            },
            zk.getSessionId(),
            zk.getSessionPasswd());
    try {
      if (!connected.await(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("could not attach to the session to expire it");
      }
    } finally {
      killer.close();
    }
  }

  /** The client's current session id. */
  public static long id(CuratorFramework client) throws Exception {
    return client.getZookeeperClient().getZooKeeper().getSessionId();
  }
}

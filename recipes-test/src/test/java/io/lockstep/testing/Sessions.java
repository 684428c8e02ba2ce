package io.lockstep.testing;

import org.apache.curator.framework.CuratorFramework;

/** Real, server-side session expiry for tests. */
public final class Sessions {
  private Sessions() {}

  /** Expires the client's current session on the server, for real: see {@link SessionExpiry}. */
  public static void expire(CuratorFramework client, String connectString) throws Exception {
    var unused = SessionExpiry.expire(client, connectString);
  }

  /** The client's current session id. */
  public static long id(CuratorFramework client) throws Exception {
    return client.getZookeeperClient().getZooKeeper().getSessionId();
  }
}

package io.lockstep.testkit.internal;

import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/**
 * A client's ZooKeeper session: its id, and real, server-side expiry of it. Not API: the test kit's
 * own, and Lockstep's tests'.
 */
public final class Sessions {
  private static final int ATTACH_SECONDS = 10;

  /** ZooKeeper's server derives a session's password from its id and this (ZooKeeperServer). */
  private static final long SERVER_SECRET = 0XB3415C00L;

  private Sessions() {}

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
    long session = victim.getSessionId();
    expire(session, victim.getSessionPasswd(), connectString);
    return session;
  }

  /**
   * Expires session {@code session} on the server, knowing only its id: the password is the one a
   * ZooKeeper server derives from the id ({@code ZooKeeperServer.generatePasswd}), which holds for
   * the embedded test servers this is for.
   *
   * @throws IllegalStateException if no server could be reached within 10 seconds
   */
  public static void expire(long session, String connectString) throws Exception {
    byte[] password = new byte[16];
    new Random(session ^ SERVER_SECRET).nextBytes(password);
    expire(session, password, connectString);
  }

  private static void expire(long session, byte[] password, String connectString) throws Exception {
    CountDownLatch attached = new CountDownLatch(1);
    ZooKeeper killer =
        new ZooKeeper(
            connectString,
            (int) TimeUnit.SECONDS.toMillis(ATTACH_SECONDS),
            event -> {
              if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                attached.countDown();
              }
            },
            session,
            password);
    try {
      if (!attached.await(ATTACH_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException("could not attach to the session to expire it");
      }
    } finally {
      killer.close();
    }
  }

  /** Hears that a session ended. */
  @FunctionalInterface
  public interface EndedListener {
    /**
     * Called once a client has left {@code session} behind.
     *
     * @param endedNotBefore a lower bound of when it ended on the server, by the caller's clock
     */
    void sessionEnded(long session, long endedNotBefore);
  }

  /**
   * Follows {@code client} from now on and reports each session it leaves behind, once it is
   * connected in another: ended not before the client lost its connection (a server expires a
   * session only after it stopped hearing from the client), or not before the new connection if the
   * loss went unseen.
   */
  public static void onSessionEnded(
      CuratorFramework client, LongSupplier clock, EndedListener listener) {
    AtomicLong current = new AtomicLong(id(client));
    AtomicLong disconnectedAt = new AtomicLong();
    client
        .getConnectionStateListenable()
        .addListener(
            (c, state) -> {
              if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
                disconnectedAt.compareAndSet(0, clock.getAsLong());
              } else if (state.isConnected()) {
                long now = clock.getAsLong();
                long session = id(c);
                long previous = current.getAndSet(session);
                if (previous != session) {
                  long since = disconnectedAt.get();
                  listener.sessionEnded(previous, since == 0 ? now : since);
                }
                disconnectedAt.set(0);
              }
            });
  }

  /**
   * The client's current session id: 0 before its first connect (ZooKeeper's own value then) and
   * once the client is closed or was never started.
   */
  public static long id(CuratorFramework client) {
    try {
      return client.getZookeeperClient().getZooKeeper().getSessionId();
    } catch (Exception noHandle) {
      return 0;
    }
  }
}

package io.lockstep.demo;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;

/**
 * Which ZooKeeper sessions of the run ended, and from when: the facts that excuse two holders
 * overlapping (a holder whose session ended no longer holds anything, whatever it believes).
 *
 * <p>For each ended session the log keeps a lower bound of when it ended on the server: the moment
 * the chaos began expiring it, or, for a session that ended on its own, the moment its client lost
 * the connection (a server expires a session only after it stopped hearing from the client).
 */
final class SessionLog {
  private final ConcurrentHashMap<Long, Long> endedNotBefore = new ConcurrentHashMap<>();

  /** Records that {@code sessionId} ended, not before {@code nanos} ({@link System#nanoTime()}). */
  void ended(long sessionId, long nanos) {
    endedNotBefore.merge(sessionId, nanos, Math::min);
  }

  /** Whether {@code sessionId} may have ended at or before {@code nanos}. */
  boolean endedBy(long sessionId, long nanos) {
    Long notBefore = endedNotBefore.get(sessionId);
    return notBefore != null && notBefore <= nanos;
  }

  int endedCount() {
    return endedNotBefore.size();
  }

  /** Follows {@code client} from now on, logging each session it leaves behind. */
  void track(CuratorFramework client) throws Exception {
    AtomicLong current = new AtomicLong(sessionOf(client));
    AtomicLong disconnectedAt = new AtomicLong();
    client
        .getConnectionStateListenable()
        .addListener(
            (c, state) -> {
              if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
                disconnectedAt.compareAndSet(0, System.nanoTime());
              } else if (state.isConnected()) {
                long now = System.nanoTime();
                long session = sessionOf(c);
                long previous = current.getAndSet(session);
                if (previous != session) {
                  long since = disconnectedAt.get();
                  ended(previous, since == 0 ? now : since);
                }
                disconnectedAt.set(0);
              }
            });
  }

  /** The client's current session id, or 0 if it has no ZooKeeper handle. */
  static long sessionOf(CuratorFramework client) {
    try {
      return client.getZookeeperClient().getZooKeeper().getSessionId();
    } catch (Exception e) {
      return 0;
    }
  }
}

package io.lockstep.recipes.internal.engine;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Counts the engine's armed data and child watches per session, path and kind, so that a withdrawn
 * waiter removes the server's watch only when no other waiter of the same session still relies on
 * it. One per client, in its {@link LockEngine}.
 *
 * <p>ZooKeeper keeps one server watch per session and path however many client watchers share it,
 * and removing one client watcher leaves the server watch in place; only removing all of them drops
 * it. Readers of one session often watch the same writer, so the last one out removes the watch.
 */
final class WatchRegistry {
  private final ConcurrentMap<Key, Integer> armed = new ConcurrentHashMap<>();

  /** A session's watch on a path: a data watch, or with {@code children} a child watch. */
  record Key(long sessionId, String zkPath, boolean children) {
    Key(long sessionId, String zkPath) {
      this(sessionId, zkPath, false);
    }
  }

  /** Records one more armed watch. */
  void arm(Key key) {
    armed.merge(key, 1, Integer::sum);
  }

  /** Whether a watch of the engine is armed on this session and path. */
  boolean isArmed(Key key) {
    return armed.containsKey(key);
  }

  /**
   * Records that one watch ended (fired or withdrawn).
   *
   * @return true if no other watch of the engine remains on this session and path
   */
  boolean disarm(Key key) {
    return armed.computeIfPresent(key, (k, count) -> count <= 1 ? null : count - 1) == null;
  }
}

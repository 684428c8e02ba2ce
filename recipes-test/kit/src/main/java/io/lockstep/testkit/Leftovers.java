package io.lockstep.testkit;

import io.lockstep.testkit.internal.ServerStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The after-test check: no ephemeral node and no watch of the test's own sessions left on the
 * servers. Ephemeral nodes are found by walking the tree (every server of an ensemble has them),
 * watches by asking each server ({@code wchp}: a watch lives on the server its client talks to).
 */
final class Leftovers {
  static final Duration PATIENCE = Duration.ofSeconds(10);

  private Leftovers() {}

  static void assertNone(
      CuratorFramework admin,
      List<LockstepZooKeeper.Client> clients,
      List<String> servers,
      Duration patience) {
    Set<Long> sessions = new HashSet<>();
    for (LockstepZooKeeper.Client client : clients) {
      try {
        long session = client.curator().getZookeeperClient().getZooKeeper().getSessionId();
        if (session != 0) { // 0: not connected now; its last session is checked by no one
          sessions.add(session);
        }
      } catch (Exception closed) {
        // a client the test closed has no session left to leave anything behind
      }
    }
    if (sessions.isEmpty()) {
      return;
    }
    long deadline = System.nanoTime() + patience.toNanos();
    List<String> left = find(admin, sessions, servers);
    while (!left.isEmpty() && System.nanoTime() < deadline) {
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      left = find(admin, sessions, servers);
    }
    if (!left.isEmpty()) {
      throw new AssertionError("the test's clients left behind: " + left);
    }
  }

  private static List<String> find(
      CuratorFramework admin, Set<Long> sessions, List<String> servers) {
    List<String> left = new ArrayList<>();
    try {
      walk(admin, "/", sessions, left);
    } catch (Exception e) {
      left.add("(the tree could not be read: " + e + ")");
    }
    for (String server : servers) {
      ServerStats stats = ServerStats.of(server);
      for (long session : sessions) {
        for (String path : stats.watchedPaths(session)) {
          left.add("a watch on " + path + " (session 0x" + Long.toHexString(session) + ")");
        }
      }
    }
    return left;
  }

  private static void walk(
      CuratorFramework admin, String path, Set<Long> sessions, List<String> left) throws Exception {
    if (path.equals("/zookeeper")) {
      return;
    }
    List<String> children;
    try {
      Stat stat = admin.checkExists().forPath(path);
      if (stat == null) {
        return;
      }
      if (sessions.contains(stat.getEphemeralOwner())) {
        left.add("the ephemeral node " + path);
      }
      children = admin.getChildren().forPath(path);
    } catch (KeeperException.NoNodeException gone) {
      return;
    }
    for (String child : children) {
      walk(admin, ZKPaths.makePath(path, child), sessions, left);
    }
  }
}

package io.lockstep.bench;

import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.CloseableUtils;

/** A set of connected clients (sessions) for one scenario, closed together. */
final class Clients implements AutoCloseable {
  private final List<CuratorFramework> clients = new ArrayList<>();

  Clients(String connectString, int count) {
    try {
      for (int i = 0; i < count; i++) {
        clients.add(BenchZooKeeper.newClient(connectString));
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** Client {@code i} modulo the number of clients: round-robin over the sessions. */
  CuratorFramework get(int i) {
    return clients.get(i % clients.size());
  }

  @Override
  public void close() {
    clients.forEach(CloseableUtils::closeQuietly);
  }
}

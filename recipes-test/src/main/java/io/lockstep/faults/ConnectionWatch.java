package io.lockstep.faults;

import io.lockstep.testkit.internal.Sessions;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;

/**
 * Follows a worker's client: reports each connection state ({@code conn}) and each new session
 * ({@code session}, in hex) to the test process, and tells whether the connection stayed up through
 * a call (to tell an unreachable verdict on a live connection from one on a dead one).
 */
final class ConnectionWatch implements ConnectionStateListener {
  private final EventChannel events;
  private final AtomicLong changes = new AtomicLong();
  private volatile ConnectionState state = ConnectionState.CONNECTED;
  private volatile long session;

  ConnectionWatch(EventChannel events) {
    this.events = events;
  }

  /** Reports the session the client connected in first. */
  void connected(CuratorFramework client) {
    reportSession(client);
  }

  @Override
  public void stateChanged(CuratorFramework client, ConnectionState newState) {
    changes.incrementAndGet();
    state = newState;
    events.send("conn", newState);
    if (newState.isConnected()) {
      reportSession(client);
    }
  }

  private void reportSession(CuratorFramework client) {
    long id = Sessions.id(client);
    if (id != 0 && id != session) {
      session = id;
      events.send("session", Long.toHexString(id));
    }
  }

  /** A mark to pass to {@link #connectedSince}; -1 if not connected now. */
  long mark() {
    long mark = changes.get();
    return state.isConnected() ? mark : -1;
  }

  /** Whether the connection was up at {@code mark} and has not changed since. */
  boolean connectedSince(long mark) {
    return mark >= 0 && changes.get() == mark && state.isConnected();
  }
}

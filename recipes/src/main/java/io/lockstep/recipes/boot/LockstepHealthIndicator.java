package io.lockstep.recipes.boot;

import io.lockstep.recipes.locks.LockObserver;
import io.lockstep.recipes.locks.LockObservers;
import io.lockstep.recipes.locks.LockState;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.listen.Listenable;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The health of Lockstep's Curator client: UP while the client is connected to ZooKeeper, DOWN
 * otherwise (connecting, suspended, lost, or closed), with these details:
 *
 * <table>
 *   <caption>The details</caption>
 *   <tr><th>Detail</th><th>Meaning</th></tr>
 *   <tr><td>{@code connectionState}</td><td>the client's latest connection state ({@code
 *       CONNECTED}, {@code SUSPENDED}, {@code RECONNECTED}, {@code LOST}, {@code READ_ONLY}), or
 *       {@code CONNECTING} until the first connection (also after Curator reports {@code LOST}
 *       because none came within the session timeout) and {@code CLOSED} once closed</td></tr>
 *   <tr><td>{@code connectString}</td><td>the ensemble the client talks to</td></tr>
 *   <tr><td>{@code sessionId}</td><td>the current session, in hexadecimal as ZooKeeper logs it;
 *       only while connected</td></tr>
 *   <tr><td>{@code holdsAtRisk}</td><td>holds of the client's locks whose connection is
 *       suspended, not yet held again, lost or released</td></tr>
 *   <tr><td>{@code holdsLost}</td><td>holds lost (session expired, node deleted, client closed)
 *       and not yet released by their holders</td></tr>
 * </table>
 *
 * <p>The hold counts cover every lock of the client from the indicator's creation on (a {@link
 * io.lockstep.recipes.locks.LockObserver}); a lost hold counts until its holder releases it, so a
 * count that stays above zero points at code that never lets go of a lost lock. Reading the health
 * sends nothing to ZooKeeper. {@link #close()} stops observing the client.
 */
public final class LockstepHealthIndicator implements HealthIndicator, AutoCloseable {
  private final CuratorFramework client;
  private final HoldStates holds = new HoldStates();
  private final Listenable<LockObserver> observers; // the client's, kept: close needs no lookup
  private final ConnectionStateListener connection = this::connectionChanged;
  private volatile ConnectionState lastState; // null until the first event after creation

  /** Whether the client has been connected since this was made: a LOST before is no loss. */
  private volatile boolean everConnected;

  /**
   * Reports the health of {@code client} and observes its locks from now on.
   *
   * @param client the Curator client, started or not
   * @throws NullPointerException if {@code client} is null
   */
  public LockstepHealthIndicator(CuratorFramework client) {
    this.client = Objects.requireNonNull(client, "client");
    client.getConnectionStateListenable().addListener(connection);
    this.observers = LockObservers.of(client);
    observers.addListener(holds);
    this.everConnected =
        client.getState() == CuratorFrameworkState.STARTED
            && client.getZookeeperClient().isConnected();
  }

  private void connectionChanged(CuratorFramework changed, ConnectionState state) {
    if (state.isConnected()) {
      everConnected = true;
    }
    lastState = state;
  }

  /**
   * The health now: UP while connected, DOWN otherwise, with the details of the class comment.
   *
   * @return the health
   */
  @Override
  public Health health() {
    boolean started = client.getState() == CuratorFrameworkState.STARTED;
    boolean connected = started && client.getZookeeperClient().isConnected();
    if (connected) {
      everConnected = true;
    }
    Health.Builder health = connected ? Health.up() : Health.down();
    health.withDetail("connectionState", connectionState(started, connected));
    health.withDetail("connectString", client.getZookeeperClient().getCurrentConnectionString());
    if (connected) {
      long session = sessionId();
      if (session != 0) {
        health.withDetail("sessionId", "0x" + Long.toHexString(session));
      }
    }
    health.withDetail("holdsAtRisk", holds.count(LockState.AT_RISK));
    health.withDetail("holdsLost", holds.count(LockState.LOST));
    return health.build();
  }

  private String connectionState(boolean started, boolean connected) {
    if (!started) {
      return client.getState() == CuratorFrameworkState.STOPPED ? "CLOSED" : "CONNECTING";
    }
    ConnectionState last = lastState;
    if (last != null && (everConnected || last.isConnected())) {
      return last.name();
    }
    // Curator reports LOST once a first connection has not come within the session timeout:
    // nothing was lost, the client is still trying to connect for the first time
    return connected ? ConnectionState.CONNECTED.name() : "CONNECTING";
  }

  private long sessionId() {
    try {
      return client.getZookeeperClient().getZooKeeper().getSessionId();
    } catch (Exception closedMeanwhile) {
      return 0;
    }
  }

  /** Stops observing the client's connection and locks. Closing again does nothing. */
  @Override
  public void close() {
    client.getConnectionStateListenable().removeListener(connection);
    observers.removeListener(holds);
  }
}

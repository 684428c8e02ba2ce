package io.lockstep.testkit.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.curator.test.InstanceSpec;

/**
 * One client's network links to every server of an embedded server or ensemble: a {@link TcpProxy}
 * per server, so that faults hit the clients of these links alone. Give the client {@link
 * #connectString()}. Not API: the test kit's own, and Lockstep's tests'.
 */
public final class Links implements AutoCloseable {
  private final List<TcpProxy> proxies;

  private Links(List<TcpProxy> proxies) {
    this.proxies = List.copyOf(proxies);
  }

  /** Starts a proxy to each of {@code servers}. */
  public static Links to(List<InstanceSpec> servers) {
    List<TcpProxy> proxies = new ArrayList<>();
    try {
      for (InstanceSpec server : servers) {
        proxies.add(TcpProxy.start("127.0.0.1", server.getPort()));
      }
    } catch (RuntimeException e) {
      proxies.forEach(TcpProxy::close);
      throw e;
    }
    return new Links(proxies);
  }

  /** Whether a client connected through {@code connectString} talks through one of these links. */
  public boolean carries(String connectString) {
    for (String server : connectString.split(",")) {
      for (TcpProxy proxy : proxies) {
        if (server.trim().endsWith(":" + proxy.port())) {
          return true;
        }
      }
    }
    return false;
  }

  /** The connect string that reaches every server through these links. */
  public String connectString() {
    return proxies.stream().map(TcpProxy::connectString).collect(Collectors.joining(","));
  }

  /** Cuts every link loudly: connections reset, new ones refused ({@link TcpProxy#cut()}). */
  public void cut() {
    proxies.forEach(TcpProxy::cut);
  }

  /** Cuts every link silently: bytes dropped, nothing reset ({@link TcpProxy#blackhole()}). */
  public void blackhole() {
    proxies.forEach(TcpProxy::blackhole);
  }

  /** Ends a cut or blackhole on every link. */
  public void heal() {
    proxies.forEach(TcpProxy::heal);
  }

  /** Delays every link by {@code millis} each way; 0 ends the delay. */
  public void setLatency(long millis) {
    proxies.forEach(proxy -> proxy.setLatency(millis));
  }

  /**
   * Loses the answer to the next request the client sends, then closes that connection {@code
   * closeAfterMillis} later ({@link TcpProxy#loseNextResponse(long)}). The fault is armed on the
   * links with an open connection, the one the client talks through.
   *
   * @return whether a link had a connection to arm the fault on
   */
  public boolean loseNextResponse(long closeAfterMillis) {
    boolean armed = false;
    for (TcpProxy proxy : proxies) {
      if (proxy.openConnections() > 0) {
        proxy.loseNextResponse(closeAfterMillis);
        armed = true;
      }
    }
    return armed;
  }

  /** Heals every link and takes its latency away. */
  public void restore() {
    heal();
    setLatency(0);
  }

  @Override
  public void close() {
    proxies.forEach(TcpProxy::close);
  }

  @Override
  public String toString() {
    return "Links[" + connectString() + "]";
  }
}

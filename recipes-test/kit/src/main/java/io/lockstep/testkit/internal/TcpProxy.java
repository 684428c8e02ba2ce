package io.lockstep.testkit.internal;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An in-process TCP proxy that injects network faults between a client and a server in tests.
 *
 * <p>One proxy listens on an ephemeral port of 127.0.0.1 and forwards each client connection to one
 * target {@code host:port} (typically Curator to a ZooKeeper server: give the client {@link
 * #connectString()}). If the target cannot be reached, the client's connection is closed.
 *
 * <p>The faults and what they simulate:
 *
 * <ul>
 *   <li>{@link #cut()}: a link that fails loudly. Every open connection is closed on both sides,
 *       and new connections are accepted but closed at once, so a client sees connection loss and
 *       keeps retrying until {@link #heal()}.
 *   <li>{@link #blackhole()}: a network partition without resets. Sockets stay open but every byte
 *       is silently dropped in both directions, so a client only notices through its own timeouts.
 *       {@link #heal()} ends it and closes the connections that lost bytes.
 *   <li>{@link #setLatency(long)}, {@link #setLatency(Duration)}: a slow link. Every chunk is
 *       delayed in both directions, in order.
 *   <li>{@link #loseNextResponse(long)}: a request that reaches the server while its answer is
 *       lost. The connection then goes silent towards the client and is closed shortly after, so
 *       the client sees connection loss without knowing whether its request was applied.
 * </ul>
 *
 * <p>Forwarding works on chunks: whatever one read from a socket returned. The proxy does not
 * understand the protocol it carries, so a chunk may hold part of a request or several requests.
 *
 * <p>All methods are thread-safe. Threads are daemon platform threads: one acceptor, four per
 * connection (a reader and a writer in each direction) and one scheduler for delayed closes.
 */
public final class TcpProxy implements AutoCloseable {

  /** What happens to traffic, as set by the last of {@link #cut()}, blackhole and heal. */
  enum Mode {
    FORWARD,
    CUT,
    BLACKHOLE
  }

  private final InetSocketAddress target;
  private final ServerSocket listener;
  private final Thread acceptor;
  private final ScheduledExecutorService closeScheduler;
  private final Set<ProxyConnection> connections = ConcurrentHashMap.newKeySet();
  private final AtomicInteger connectionNumber = new AtomicInteger();
  private final AtomicBoolean proxyClosed = new AtomicBoolean();

  /** Numbers every chunk read from a client, so an armed fault knows which chunks came after it. */
  private final AtomicLong clientChunkNumber = new AtomicLong();

  /** The armed, not yet fired {@link #loseNextResponse} fault; null when none is armed. */
  private final AtomicReference<ProxyLostResponse> armedLostResponse = new AtomicReference<>();

  // Volatile: read lock-free by the acceptor and the writers of every connection. The acceptor
  // registers a connection and then re-reads the mode; cut() writes the mode and then walks the
  // registered connections, so a connection accepted concurrently with cut() is closed by one side.
  private volatile Mode mode = Mode.FORWARD;

  // Volatile: written by setLatency, read by the reader threads when they stamp a chunk.
  private volatile long latencyNanos;

  // Volatile: the fault that awaitResponseLost waits for (the last one armed, fired or not); null
  // before the first loseNextResponse.
  private volatile ProxyLostResponse lastLostResponse;

  private TcpProxy(InetSocketAddress target, ServerSocket listener) {
    this.target = target;
    this.listener = listener;
    this.closeScheduler =
        Executors.newSingleThreadScheduledExecutor(
            task -> daemonThread(task, "tcp-proxy-" + listener.getLocalPort() + "-scheduler"));
    this.acceptor = daemonThread(this::acceptLoop, "tcp-proxy-" + listener.getLocalPort());
  }

  /**
   * Starts a proxy listening on an ephemeral port of 127.0.0.1 and forwarding to {@code
   * targetHost:targetPort}.
   *
   * @throws UncheckedIOException if the listening socket cannot be bound
   */
  public static TcpProxy start(String targetHost, int targetPort) {
    ServerSocket listener = null;
    try {
      listener = new ServerSocket();
      listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      TcpProxy proxy = new TcpProxy(new InetSocketAddress(targetHost, targetPort), listener);
      proxy.acceptor.start();
      return proxy;
    } catch (IOException e) {
      closeQuietly(listener);
      throw new UncheckedIOException("cannot start a proxy to " + targetHost + ":" + targetPort, e);
    }
  }

  /** The local port clients connect to. */
  public int port() {
    return listener.getLocalPort();
  }

  /**
   * The connect string of this proxy, {@code 127.0.0.1:port}, to give a client instead of the
   * server's.
   */
  public String connectString() {
    return "127.0.0.1:" + port();
  }

  /**
   * Closes every open connection on both sides and, until {@link #heal()}, accepts new connections
   * but closes them at once without contacting the target. Replaces a blackhole in force.
   */
  public void cut() {
    mode = Mode.CUT;
    connections.forEach(ProxyConnection::close);
  }

  /**
   * Starts a partition without resets: open connections stay open but every byte is dropped in both
   * directions, including bytes already read and still held back by {@link #setLatency latency}.
   * New connections are accepted and connected to the target, and their bytes dropped too. A close
   * (end of stream) from either side is also dropped. Replaces a cut in force.
   */
  public void blackhole() {
    mode = Mode.BLACKHOLE;
  }

  /**
   * Ends a {@link #cut()} or {@link #blackhole()}: traffic is forwarded normally again. Every
   * connection that dropped a byte or a close during a blackhole is closed on both sides, since its
   * streams now have gaps; connections that dropped nothing keep working. Latency and an armed
   * {@link #loseNextResponse} are not changed.
   */
  public void heal() {
    mode = Mode.FORWARD;
    // A writer that drops a chunk concurrently marks its connection and then re-reads the mode,
    // closing the connection itself if the blackhole has already ended (see ProxyConnection).
    connections.stream().filter(ProxyConnection::droppedBytes).forEach(ProxyConnection::close);
  }

  /**
   * Delays every chunk by {@code millis} in both directions, from when the proxy reads it. Order is
   * kept: after the latency is lowered, new chunks still wait for the ones read before them. 0
   * disables the delay.
   *
   * @throws IllegalArgumentException if {@code millis} is negative
   */
  public void setLatency(long millis) {
    if (millis < 0) {
      throw new IllegalArgumentException("latency must not be negative: " + millis);
    }
    latencyNanos = TimeUnit.MILLISECONDS.toNanos(millis);
  }

  /**
   * As {@link #setLatency(long)}, to the nanosecond: the delay applies in each direction, so {@code
   * Duration.ofNanos(500_000)} makes a round trip 1 ms longer. {@link Duration#ZERO} disables it.
   *
   * @throws IllegalArgumentException if {@code latency} is negative
   * @throws NullPointerException if {@code latency} is null
   */
  public void setLatency(Duration latency) {
    if (latency.isNegative()) {
      throw new IllegalArgumentException("latency must not be negative: " + latency);
    }
    latencyNanos = latency.toNanos();
  }

  /**
   * Arms a one-shot fault on the next chunk a client sends after this call, on any connection. That
   * chunk is forwarded to the server as usual; from just before it is written, nothing the server
   * sends on that connection reaches the client (including server bytes still held back by
   * latency), and {@code closeAfterMillis} after it was written the connection is closed on both
   * sides. The client then reconnects through the proxy, which forwards normally.
   *
   * <p>The fault fires on the first such chunk actually written to the server: chunks dropped by a
   * blackhole, lost to a cut or failing to be written do not use it up. Beware that any chunk
   * counts, including a protocol's heartbeats (a ZooKeeper ping) if one is sent before the intended
   * request. Arming again before the fault fired replaces it.
   *
   * @throws IllegalArgumentException if {@code closeAfterMillis} is negative
   */
  public void loseNextResponse(long closeAfterMillis) {
    if (closeAfterMillis < 0) {
      throw new IllegalArgumentException("delay must not be negative: " + closeAfterMillis);
    }
    ProxyLostResponse fault = new ProxyLostResponse(clientChunkNumber.get(), closeAfterMillis);
    lastLostResponse = fault;
    armedLostResponse.set(fault);
  }

  /**
   * Waits until the fault armed by the last {@link #loseNextResponse} has fired, that is until its
   * request chunk has been written to the server and the connection stopped delivering to the
   * client. The connection is closed {@code closeAfterMillis} later.
   *
   * @return true if the fault fired, false if the timeout elapsed first
   * @throws IllegalStateException if {@link #loseNextResponse} was never called
   */
  public boolean awaitResponseLost(long timeout, TimeUnit unit) throws InterruptedException {
    ProxyLostResponse fault = lastLostResponse;
    if (fault == null) {
      throw new IllegalStateException("loseNextResponse was never called");
    }
    return fault.fired.await(timeout, unit);
  }

  /** The number of client connections currently open through this proxy. */
  public int openConnections() {
    return connections.size();
  }

  /** Stops accepting, closes every connection on both sides and stops the proxy's threads. */
  @Override
  public void close() {
    if (!proxyClosed.compareAndSet(false, true)) {
      return;
    }
    closeQuietly(listener);
    connections.forEach(ProxyConnection::close);
    closeScheduler.shutdownNow();
  }

  @Override
  public String toString() {
    return "TcpProxy[" + connectString() + " -> " + target + ", " + mode + "]";
  }

  private void acceptLoop() {
    while (!proxyClosed.get()) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        return; // the listener was closed
      }
      if (mode == Mode.CUT || proxyClosed.get()) {
        closeQuietly(client);
        continue;
      }
      ProxyConnection connection =
          new ProxyConnection(this, client, connectionNumber.incrementAndGet());
      connections.add(connection);
      if (mode == Mode.CUT || proxyClosed.get()) {
        connection.close();
      } else {
        connection.start();
      }
    }
  }

  /** The current mode, read lock-free by the connections' writers. */
  Mode mode() {
    return mode;
  }

  /** The latency to stamp on a chunk read now. */
  long latencyNanos() {
    return latencyNanos;
  }

  /** The number of a chunk just read from a client. */
  long nextClientChunkNumber() {
    return clientChunkNumber.incrementAndGet();
  }

  InetSocketAddress target() {
    return target;
  }

  /** Takes the armed lost-response fault if {@code chunk} is client data read after arming. */
  ProxyLostResponse claimLostResponse(ProxyChunk chunk) {
    ProxyLostResponse fault = armedLostResponse.get();
    if (fault == null
        || chunk.kind != ProxyChunk.Kind.DATA
        || chunk.clientChunkNumber <= fault.armedAfterChunk
        || !armedLostResponse.compareAndSet(fault, null)) {
      return null;
    }
    return fault;
  }

  /** Arms {@code fault} again after its chunk could not be delivered, unless another is armed. */
  void rearm(ProxyLostResponse fault) {
    armedLostResponse.compareAndSet(null, fault);
  }

  /**
   * Closes {@code connection} {@code millis} from now.
   *
   * @throws RejectedExecutionException if the proxy is closing
   */
  void closeLater(ProxyConnection connection, long millis) {
    var unused = closeScheduler.schedule(connection::close, millis, TimeUnit.MILLISECONDS);
  }

  /** Forgets a connection that closed. */
  void forget(ProxyConnection connection) {
    connections.remove(connection);
  }

  static Thread daemonThread(Runnable task, String name) {
    Thread thread = new Thread(task, name);
    thread.setDaemon(true);
    return thread;
  }

  static void closeQuietly(Closeable closeable) {
    if (closeable == null) {
      return;
    }
    try {
      closeable.close();
    } catch (IOException e) {
      // closing on a fault or shutdown path: nothing useful to do
    }
  }
}

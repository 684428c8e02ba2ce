package io.lockstep.testing;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
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
 *   <li>{@link #setLatency(long)}: a slow link. Every chunk is delayed in both directions, in
 *       order.
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
  private static final int CONNECT_TIMEOUT_MILLIS = 5_000;
  private static final int BUFFER_SIZE = 16 * 1024;

  /** What happens to traffic, as set by the last of {@link #cut()}, blackhole and heal. */
  private enum Mode {
    FORWARD,
    CUT,
    BLACKHOLE
  }

  private final InetSocketAddress target;
  private final ServerSocket listener;
  private final Thread acceptor;
  private final ScheduledExecutorService closeScheduler;
  private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
  private final AtomicInteger connectionNumber = new AtomicInteger();
  private final AtomicBoolean proxyClosed = new AtomicBoolean();

  /** Numbers every chunk read from a client, so an armed fault knows which chunks came after it. */
  private final AtomicLong clientChunkNumber = new AtomicLong();

  /** The armed, not yet fired {@link #loseNextResponse} fault; null when none is armed. */
  private final AtomicReference<LostResponse> armedLostResponse = new AtomicReference<>();

  // Volatile: read lock-free by the acceptor and the writers of every connection. The acceptor
  // registers a connection and then re-reads the mode; cut() writes the mode and then walks the
  // registered connections, so a connection accepted concurrently with cut() is closed by one side.
  private volatile Mode mode = Mode.FORWARD;

  // Volatile: written by setLatency, read by the reader threads when they stamp a chunk.
  private volatile long latencyNanos;

  // Volatile: the fault that awaitResponseLost waits for (the last one armed, fired or not); null
  // before the first loseNextResponse.
  private volatile LostResponse lastLostResponse;

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
    connections.forEach(Connection::close);
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
    // closing the connection itself if the blackhole has already ended (see Connection#dropped).
    connections.stream().filter(c -> c.droppedBytes).forEach(Connection::close);
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
    LostResponse fault = new LostResponse(clientChunkNumber.get(), closeAfterMillis);
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
    LostResponse fault = lastLostResponse;
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
    connections.forEach(Connection::close);
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
      Connection connection = new Connection(client, connectionNumber.incrementAndGet());
      connections.add(connection);
      if (mode == Mode.CUT || proxyClosed.get()) {
        connection.close();
      } else {
        connection.start();
      }
    }
  }

  /** One client connection and its connection to the target. */
  private final class Connection {
    private final Socket client;
    private final String name;
    private final DelayQueue<Chunk> toServer = new DelayQueue<>();
    private final DelayQueue<Chunk> toClient = new DelayQueue<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicInteger directionsEnded = new AtomicInteger();

    // Volatile: set by the connecting thread before connect(), read by close(). Each checks the
    // other's flag after writing its own, so a socket created during close() is still closed.
    private volatile Socket server;

    // Volatile: set once by a writer that dropped a chunk in a blackhole, read by heal().
    private volatile boolean droppedBytes;

    // Volatile: set once by the client-to-server writer when a lost-response fault fires, read by
    // the server-to-client writer.
    private volatile boolean responsesLost;

    Connection(Socket client, int number) {
      this.client = client;
      this.name = "tcp-proxy-" + port() + "-connection-" + number;
    }

    void start() {
      daemonThread(this::connectAndReadClient, name + "-client-reader").start();
    }

    /** Connects to the target, starts the other threads, then reads the client's bytes. */
    private void connectAndReadClient() {
      try {
        client.setTcpNoDelay(true);
        Socket socket = new Socket();
        server = socket;
        if (closed.get()) {
          closeQuietly(socket);
          return;
        }
        socket.connect(target, CONNECT_TIMEOUT_MILLIS);
        socket.setTcpNoDelay(true);
        daemonThread(() -> read(socket, toClient, false), name + "-server-reader").start();
        daemonThread(() -> write(toServer, socket, true), name + "-server-writer").start();
        daemonThread(() -> write(toClient, client, false), name + "-client-writer").start();
        read(client, toServer, true);
      } catch (IOException e) {
        close();
      }
    }

    /** Reads chunks from {@code source} and queues them, stamped with their delivery time. */
    private void read(Socket source, DelayQueue<Chunk> queue, boolean fromClient) {
      // Confined to this thread: the delivery time of the previous chunk, so chunks stay in order
      // when the latency is lowered.
      long previousDueNanos = System.nanoTime();
      long sequence = 0;
      byte[] buffer = new byte[BUFFER_SIZE];
      try {
        InputStream in = source.getInputStream();
        while (true) {
          int count = in.read(buffer);
          long dueNanos = System.nanoTime() + latencyNanos;
          if (dueNanos - previousDueNanos < 0) {
            dueNanos = previousDueNanos;
          }
          previousDueNanos = dueNanos;
          if (count < 0) {
            queue.add(Chunk.endOfStream(dueNanos, sequence++));
            return;
          }
          long number = fromClient ? clientChunkNumber.incrementAndGet() : 0;
          queue.add(Chunk.data(Arrays.copyOf(buffer, count), dueNanos, sequence++, number));
        }
      } catch (IOException e) {
        close();
      }
    }

    /** Delivers queued chunks to {@code destination} when due, or drops them as faults require. */
    private void write(DelayQueue<Chunk> queue, Socket destination, boolean toServerSide) {
      try {
        OutputStream out = destination.getOutputStream();
        while (true) {
          Chunk chunk = queue.take();
          if (chunk.kind == Chunk.Kind.STOP) {
            return;
          }
          if (mode == Mode.BLACKHOLE) {
            dropped();
            continue;
          }
          if (!toServerSide && responsesLost) {
            continue;
          }
          LostResponse fault = toServerSide ? claimLostResponse(chunk) : null;
          if (fault != null) {
            responsesLost = true; // before the write, so not even a fast answer gets through
          }
          if (chunk.kind == Chunk.Kind.END_OF_STREAM) {
            destination.shutdownOutput();
            if (directionsEnded.incrementAndGet() == 2) {
              close();
            }
            return;
          }
          try {
            out.write(chunk.data);
          } catch (IOException e) {
            if (fault != null) {
              armedLostResponse.compareAndSet(null, fault); // not delivered: re-arm it
            }
            throw e;
          }
          if (fault != null) {
            fault.fired.countDown();
            var unused =
                closeScheduler.schedule(this::close, fault.closeAfterMillis, TimeUnit.MILLISECONDS);
          }
        }
      } catch (IOException e) {
        close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        close();
      } catch (RejectedExecutionException e) { // the proxy is closing: its scheduler is shut down
        close();
      }
    }

    /** Takes the armed lost-response fault if {@code chunk} is client data read after arming. */
    private LostResponse claimLostResponse(Chunk chunk) {
      LostResponse fault = armedLostResponse.get();
      if (fault == null
          || chunk.kind != Chunk.Kind.DATA
          || chunk.clientChunkNumber <= fault.armedAfterChunk
          || !armedLostResponse.compareAndSet(fault, null)) {
        return null;
      }
      return fault;
    }

    /** Records a chunk dropped by a blackhole; closes if heal() already ran and missed it. */
    private void dropped() {
      droppedBytes = true;
      if (mode != Mode.BLACKHOLE) {
        close();
      }
    }

    /** Closes both sockets and stops this connection's threads; idempotent. */
    void close() {
      if (!closed.compareAndSet(false, true)) {
        return;
      }
      closeQuietly(client);
      closeQuietly(server);
      toServer.add(Chunk.STOP);
      toClient.add(Chunk.STOP);
      connections.remove(this);
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /** A piece of one direction's byte stream, due for delivery at {@code dueNanos}. */
  private static final class Chunk implements Delayed {
    enum Kind {
      DATA,
      END_OF_STREAM,
      STOP
    }

    /** Tells a writer to exit; always due and ahead of every other chunk. */
    static final Chunk STOP = new Chunk(Kind.STOP, null, 0, 0, 0);

    final Kind kind;
    final byte[] data;
    final long dueNanos;
    final long sequence;
    final long clientChunkNumber;

    private Chunk(Kind kind, byte[] data, long dueNanos, long sequence, long clientChunkNumber) {
      this.kind = kind;
      this.data = data;
      this.dueNanos = dueNanos;
      this.sequence = sequence;
      this.clientChunkNumber = clientChunkNumber;
    }

    static Chunk data(byte[] data, long dueNanos, long sequence, long clientChunkNumber) {
      return new Chunk(Kind.DATA, data, dueNanos, sequence, clientChunkNumber);
    }

    static Chunk endOfStream(long dueNanos, long sequence) {
      return new Chunk(Kind.END_OF_STREAM, null, dueNanos, sequence, 0);
    }

    @Override
    public long getDelay(TimeUnit unit) {
      if (kind == Kind.STOP) {
        return -1;
      }
      return unit.convert(dueNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed other) {
      Chunk that = (Chunk) other;
      if (kind == Kind.STOP || that.kind == Kind.STOP) {
        return Boolean.compare(that.kind == Kind.STOP, kind == Kind.STOP);
      }
      int byDue = Long.signum(dueNanos - that.dueNanos);
      return byDue != 0 ? byDue : Long.compare(sequence, that.sequence);
    }
  }

  /** An armed {@link #loseNextResponse} fault. */
  private static final class LostResponse {
    /** The last client chunk number when armed; only later chunks can fire the fault. */
    final long armedAfterChunk;

    final long closeAfterMillis;
    final CountDownLatch fired = new CountDownLatch(1);

    LostResponse(long armedAfterChunk, long closeAfterMillis) {
      this.armedAfterChunk = armedAfterChunk;
      this.closeAfterMillis = closeAfterMillis;
    }
  }

  private static Thread daemonThread(Runnable task, String name) {
    Thread thread = new Thread(task, name);
    thread.setDaemon(true);
    return thread;
  }

  private static void closeQuietly(Closeable closeable) {
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

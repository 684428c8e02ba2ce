package io.lockstep.testkit.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.Arrays;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** For {@link TcpProxy}: one client connection and its connection to the target. */
final class ProxyConnection {
  private static final int CONNECT_TIMEOUT_MILLIS = 5_000;
  private static final int BUFFER_SIZE = 16 * 1024;

  private final TcpProxy proxy;
  private final Socket client;
  private final String name;
  private final DelayQueue<ProxyChunk> toServer = new DelayQueue<>();
  private final DelayQueue<ProxyChunk> toClient = new DelayQueue<>();
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

  ProxyConnection(TcpProxy proxy, Socket client, int number) {
    this.proxy = proxy;
    this.client = client;
    this.name = "tcp-proxy-" + proxy.port() + "-connection-" + number;
  }

  void start() {
    TcpProxy.daemonThread(this::connectAndReadClient, name + "-client-reader").start();
  }

  /** Connects to the target, starts the other threads, then reads the client's bytes. */
  private void connectAndReadClient() {
    try {
      client.setTcpNoDelay(true);
      Socket socket = new Socket();
      server = socket;
      if (closed.get()) {
        TcpProxy.closeQuietly(socket);
        return;
      }
      socket.connect(proxy.target(), CONNECT_TIMEOUT_MILLIS);
      socket.setTcpNoDelay(true);
      TcpProxy.daemonThread(() -> read(socket, toClient, false), name + "-server-reader").start();
      TcpProxy.daemonThread(() -> write(toServer, socket, true), name + "-server-writer").start();
      TcpProxy.daemonThread(() -> write(toClient, client, false), name + "-client-writer").start();
      read(client, toServer, true);
    } catch (IOException e) {
      close();
    }
  }

  /** Reads chunks from {@code source} and queues them, stamped with their delivery time. */
  private void read(Socket source, DelayQueue<ProxyChunk> queue, boolean fromClient) {
    // Confined to this thread: the delivery time of the previous chunk, so chunks stay in order
    // when the latency is lowered.
    long previousDueNanos = System.nanoTime();
    long sequence = 0;
    byte[] buffer = new byte[BUFFER_SIZE];
    try {
      InputStream in = source.getInputStream();
      while (true) {
        int count = in.read(buffer);
        long dueNanos = System.nanoTime() + proxy.latencyNanos();
        if (dueNanos - previousDueNanos < 0) {
          dueNanos = previousDueNanos;
        }
        previousDueNanos = dueNanos;
        if (count < 0) {
          queue.add(ProxyChunk.endOfStream(dueNanos, sequence++));
          return;
        }
        long number = fromClient ? proxy.nextClientChunkNumber() : 0;
        queue.add(ProxyChunk.data(Arrays.copyOf(buffer, count), dueNanos, sequence++, number));
      }
    } catch (IOException e) {
      close();
    }
  }

  /** Delivers queued chunks to {@code destination} when due, or drops them as faults require. */
  private void write(DelayQueue<ProxyChunk> queue, Socket destination, boolean toServerSide) {
    try {
      OutputStream out = destination.getOutputStream();
      while (true) {
        ProxyChunk chunk = queue.take();
        if (chunk.kind == ProxyChunk.Kind.STOP) {
          return;
        }
        if (proxy.mode() == TcpProxy.Mode.BLACKHOLE) {
          dropped();
          continue;
        }
        if (!toServerSide && responsesLost) {
          continue;
        }
        ProxyLostResponse fault = toServerSide ? proxy.claimLostResponse(chunk) : null;
        if (fault != null) {
          responsesLost = true; // before the write, so not even a fast answer gets through
        }
        if (chunk.kind == ProxyChunk.Kind.END_OF_STREAM) {
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
            proxy.rearm(fault); // not delivered: re-arm it
          }
          throw e;
        }
        if (fault != null) {
          fault.fired.countDown();
          proxy.closeLater(this, fault.closeAfterMillis);
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

  /** Records a chunk dropped by a blackhole; closes if heal() already ran and missed it. */
  private void dropped() {
    droppedBytes = true;
    if (proxy.mode() != TcpProxy.Mode.BLACKHOLE) {
      close();
    }
  }

  /** Closes both sockets and stops this connection's threads; idempotent. */
  void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    TcpProxy.closeQuietly(client);
    TcpProxy.closeQuietly(server);
    toServer.add(ProxyChunk.STOP);
    toClient.add(ProxyChunk.STOP);
    proxy.forget(this);
  }

  @Override
  public String toString() {
    return name;
  }

  /** Whether a blackhole dropped a byte or a close of this connection. */
  boolean droppedBytes() {
    return droppedBytes;
  }
}

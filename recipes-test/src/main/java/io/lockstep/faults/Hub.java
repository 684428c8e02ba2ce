package io.lockstep.faults;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The test process's end of the workers' channels: a loopback server socket that every worker
 * connects to twice, once for its events ({@value #EVENTS}: recorded in the {@link History}, and
 * commands sent back) and once for its writes to the fenced store ({@value #STORE}: answered by the
 * {@link StoreService}). One thread reads each connection.
 */
final class Hub implements AutoCloseable {
  static final String EVENTS = "events";
  static final String STORE = "store";

  /** The command side of one worker's event channel. */
  private static final class Commands {
    final ReentrantLock lock = new ReentrantLock();
    final Writer out; // guarded by lock

    Commands(Writer out) {
      this.out = out;
    }
  }

  private final ServerSocket server;
  private final History history;
  private final StoreService store;
  private final Map<Integer, Commands> commands = new ConcurrentHashMap<>();
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final List<String> failures = new CopyOnWriteArrayList<>();
  private volatile boolean closing;

  Hub(History history, StoreService store) throws IOException {
    this.history = history;
    this.store = store;
    this.server = new ServerSocket(0, 100, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "hub-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() {
    return server.getLocalPort();
  }

  /** Sends {@code command} to {@code worker}. */
  void command(int worker, String command) {
    Commands channel = commands.get(worker);
    if (channel == null) {
      throw new IllegalStateException("worker " + worker + " is not connected");
    }
    channel.lock.lock();
    try {
      channel.out.write(command + "\n");
      channel.out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException("worker " + worker + " unreachable", e);
    } finally {
      channel.lock.unlock();
    }
  }

  /** Lines the hub could not make sense of (a protocol error is a failure of the run). */
  List<String> failures() {
    return List.copyOf(failures);
  }

  private void accept() {
    while (!closing) {
      try {
        Socket socket = server.accept();
        socket.setTcpNoDelay(true);
        sockets.add(socket);
        Thread reader = new Thread(() -> serve(socket), "hub-connection");
        reader.setDaemon(true);
        reader.start();
      } catch (IOException e) {
        if (!closing) {
          failures.add("accept failed: " + e);
        }
        return;
      }
    }
  }

  private void serve(Socket socket) {
    try (BufferedReader in =
            new BufferedReader(
                new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        Writer out =
            new BufferedWriter(
                new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8))) {
      String[] hello = in.readLine().split(" ");
      int worker = Integer.parseInt(hello[1]);
      Thread.currentThread().setName("hub-" + hello[0] + "-" + worker);
      if (hello[0].equals(EVENTS)) {
        commands.put(worker, new Commands(out));
        events(worker, in);
      } else {
        writes(worker, in, out);
      }
    } catch (IOException | RuntimeException e) {
      if (!closing && !(e instanceof SocketException)) {
        failures.add("connection failed: " + e);
      }
    }
  }

  private void events(int worker, BufferedReader in) throws IOException {
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      try {
        history.record(worker, line);
      } catch (RuntimeException e) {
        failures.add("worker " + worker + " sent a bad line: " + line + " (" + e + ")");
      }
    }
  }

  private void writes(int worker, BufferedReader in, Writer out) throws IOException {
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      String[] request = line.split(" ");
      boolean accepted =
          request.length == 4
              && store.decide(worker, request[1], request[2], Long.parseLong(request[3]));
      if (request.length != 4) {
        failures.add("worker " + worker + " sent a bad write: " + line);
      }
      out.write(accepted ? "A\n" : "R\n");
      out.flush();
    }
  }

  @Override
  public void close() throws IOException {
    closing = true;
    server.close();
    for (Socket socket : sockets) {
      socket.close();
    }
  }
}

package io.lockstep.faults;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A worker's line channel to the test process: events out, each stamped with the worker's {@link
 * System#nanoTime()} when sent, and commands in. One line per event: {@code type nanos field...}.
 *
 * <p>On Linux {@code System.nanoTime()} reads {@code CLOCK_MONOTONIC}, one clock for every process
 * of the machine, so the stamps of all workers and of the test process are comparable. The stamp is
 * taken under the channel's lock, so one worker's events arrive in the order of their stamps.
 *
 * <p>If the test process is gone, the worker has nobody to report to: it halts.
 */
final class EventChannel implements AutoCloseable {
  private final Socket socket;
  private final Writer out; // guarded by lock
  private final BufferedReader in; // read by the worker's command thread only
  private final ReentrantLock lock = new ReentrantLock();

  private EventChannel(Socket socket) throws IOException {
    this.socket = socket;
    this.out =
        new BufferedWriter(
            new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8));
    this.in =
        new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
  }

  /** Connects to the test process on loopback {@code port} and says which worker this is. */
  static EventChannel open(int port, int worker) throws IOException {
    Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
    socket.setTcpNoDelay(true);
    EventChannel channel = new EventChannel(socket);
    channel.line(Hub.EVENTS + " " + worker);
    return channel;
  }

  /** Sends one event, stamped now; a field's spaces would split it, so none may have any. */
  void send(String type, Object... fields) {
    StringBuilder line = new StringBuilder(type);
    lock.lock();
    try {
      line.append(' ').append(System.nanoTime());
      for (Object field : fields) {
        line.append(' ').append(field);
      }
      writeLine(line.toString());
    } finally {
      lock.unlock();
    }
  }

  /** Sends a worker's unexpected failure; the message is the rest of the line. */
  void error(String thread, Throwable failure) {
    send("error", thread, (failure.toString()).replaceAll("\\s+", " "));
  }

  /** The next command from the test process, or null once it closed the channel. */
  String nextCommand() throws IOException {
    return in.readLine();
  }

  private void line(String text) {
    lock.lock();
    try {
      writeLine(text);
    } finally {
      lock.unlock();
    }
  }

  private void writeLine(String text) {
    try {
      out.write(text);
      out.write('\n');
      out.flush();
    } catch (IOException testProcessGone) {
      Runtime.getRuntime().halt(3);
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}

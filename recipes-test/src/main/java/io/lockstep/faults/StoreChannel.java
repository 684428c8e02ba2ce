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
 * A worker's line channel to the fenced store in the test process: {@code W holdKey resource token}
 * out, {@code A} (accepted) or {@code R} (refused) back. One request at a time per process. If the
 * test process is gone, the worker halts.
 */
final class StoreChannel implements AutoCloseable {
  private final Socket socket;
  private final Writer out; // guarded by lock
  private final BufferedReader in; // guarded by lock
  private final ReentrantLock lock = new ReentrantLock();

  private StoreChannel(Socket socket) throws IOException {
    this.socket = socket;
    this.out =
        new BufferedWriter(
            new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8));
    this.in =
        new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
  }

  /** Connects to the test process on loopback {@code port} for worker {@code worker}. */
  static StoreChannel open(int port, int worker) throws IOException {
    Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
    socket.setTcpNoDelay(true);
    StoreChannel channel = new StoreChannel(socket);
    channel.out.write(Hub.STORE + " " + worker + "\n");
    channel.out.flush();
    return channel;
  }

  /** Asks the store to accept {@code token} for {@code resource}; true if it did. */
  boolean write(String holdKey, String resource, long token) {
    lock.lock();
    try {
      out.write("W " + holdKey + " " + resource + " " + token + "\n");
      out.flush();
      String answer = in.readLine();
      if (answer == null) {
        Runtime.getRuntime().halt(3);
      }
      return "A".equals(answer);
    } catch (IOException testProcessGone) {
      Runtime.getRuntime().halt(3);
      return false;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}

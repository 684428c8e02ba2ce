package io.lockstep.faults;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Sends signals to processes by pid ({@code kill -STOP}, {@code kill -CONT}) through one long-lived
 * {@code bash}, whose {@code kill} is a builtin: a signal lands within a millisecond of the call,
 * where starting a {@code kill} process per signal can take a hundred milliseconds on a loaded
 * machine (long enough for a lingering process to give its place back before it freezes). The shell
 * exits when its standard input closes ({@link #close()}, or the test JVM's end).
 */
final class Signals implements AutoCloseable {
  private final Process shell;
  private final ReentrantLock lock = new ReentrantLock();
  private final Writer in; // guarded by lock
  private final BufferedReader out; // guarded by lock

  Signals() throws IOException {
    shell = new ProcessBuilder("bash").redirectErrorStream(true).start();
    in =
        new BufferedWriter(new OutputStreamWriter(shell.getOutputStream(), StandardCharsets.UTF_8));
    out = new BufferedReader(new InputStreamReader(shell.getInputStream(), StandardCharsets.UTF_8));
  }

  /**
   * Sends {@code signal} ({@code STOP}, {@code CONT}) to {@code pid}.
   *
   * @throws IllegalStateException if {@code kill} failed (no such process)
   */
  void send(String signal, long pid) {
    lock.lock();
    try {
      in.write("kill -" + signal + " " + pid + " && echo ok || echo failed\n");
      in.flush();
      String answer = out.readLine();
      while (answer != null && !answer.equals("ok") && !answer.equals("failed")) {
        answer = out.readLine(); // kill's own complaint, before "failed"
      }
      if (!"ok".equals(answer)) {
        throw new IllegalStateException("kill -" + signal + " " + pid + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void close() {
    lock.lock();
    try {
      in.close();
      if (!shell.waitFor(5, TimeUnit.SECONDS)) {
        shell.destroyForcibly();
      }
    } catch (IOException e) {
      shell.destroyForcibly();
    } catch (InterruptedException e) {
      shell.destroyForcibly();
      Thread.currentThread().interrupt();
    } finally {
      lock.unlock();
    }
  }
}

package io.lockstep.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The child JVMs of a run (servers and workers): started on the test's own class path, each with
 * its output in a log file of its own, frozen and thawed by pid ({@code kill -STOP}, {@code kill
 * -CONT}, through {@link Signals}), killed. {@link #close()} ends every one still alive, thawing it
 * first (a frozen process cannot act on a signal but the kill), also when the run failed; a
 * shutdown hook does the same if the test JVM itself is told to exit.
 */
final class ChildProcesses implements AutoCloseable {
  /** A started child JVM. */
  record Child(String name, Process process, Path log) {
    long pid() {
      return process.pid();
    }

    boolean alive() {
      return process.isAlive();
    }
  }

  private final Path logs;
  private final Signals signals;
  private final List<Child> children = new CopyOnWriteArrayList<>();
  private final Thread hook = new Thread(this::endAll, "process-faults-cleanup");

  ChildProcesses(Path logs) throws IOException {
    this.logs = Files.createDirectories(logs);
    this.signals = new Signals();
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** Where the children's logs go. */
  Path logs() {
    return logs;
  }

  /**
   * Starts {@code mainClass} in a new JVM on this JVM's class path, its output appended to {@code
   * <name>.log}.
   */
  Child start(String name, List<String> jvmOptions, String mainClass, List<String> args)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass);
    command.addAll(args);
    Path log = logs.resolve(name + ".log");
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    Child child = new Child(name, process, log);
    children.add(child);
    return child;
  }

  /** Freezes the child: {@code kill -STOP <pid>}. */
  void freeze(Child child) {
    signal("STOP", child);
  }

  /** Thaws the child: {@code kill -CONT <pid>}. */
  void thaw(Child child) {
    signal("CONT", child);
  }

  /** Kills the child at once ({@code SIGKILL}) and waits until it is gone. */
  void kill(Child child) throws InterruptedException {
    child.process().destroyForcibly();
    if (!child.process().waitFor(10, TimeUnit.SECONDS)) {
      throw new IllegalStateException(child.name() + " did not die within 10 s of SIGKILL");
    }
  }

  /** Every child started, alive or not. */
  List<Child> all() {
    return List.copyOf(children);
  }

  private void signal(String signal, Child child) {
    signals.send(signal, child.pid());
  }

  /** Ends every child still alive: thawed, then killed. */
  private void endAll() {
    for (Child child : children) {
      if (child.alive()) {
        try {
          signal("CONT", child);
        } catch (RuntimeException alreadyGone) {
          // it died between the check and the signal
        }
        child.process().destroyForcibly();
      }
    }
    for (Child child : children) {
      try {
        child.process().waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  @Override
  public void close() {
    endAll();
    signals.close();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook is running or ran: nothing left to remove
    }
  }
}

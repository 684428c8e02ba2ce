package io.lockstep.faults;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Watches the run's lock directories from the test process: every {@value #POLL_MS} ms it reads the
 * ephemeral nodes of one server that answers (the four-letter {@code dump}: every session's
 * ephemeral nodes, from the server's copy of the tree) and keeps each node's life under {@code
 * /pf}: its owner session, when it was first seen, when it was first seen gone. A server that does
 * not answer (frozen, dead) is skipped for another; while none answers, nothing changes.
 */
final class NodeWatcher implements AutoCloseable {
  static final long POLL_MS = 100;

  /**
   * One node's life, as far as the polls saw it: it existed from some time before {@code appeared}
   * to some time after {@code lastSeen}, and was gone at {@code vanished}. While no server answers
   * (frozen, restarting) nothing is seen, so a node deleted just before a server stopped answering
   * is first seen gone only after it answers again: only {@code lastSeen} proves the node was
   * there.
   *
   * @param path the real path
   * @param session its owner
   * @param appeared when first seen
   * @param lastSeen when last seen
   * @param vanished when first seen gone, or -1 while it exists
   */
  record Life(String path, long session, long appeared, long lastSeen, long vanished) {
    boolean gone() {
      return vanished != -1;
    }
  }

  private final Supplier<List<ZkServers.Server>> answering;
  private final String prefix;
  private final ScheduledExecutorService poller =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread thread = new Thread(r, "node-watcher");
            thread.setDaemon(true);
            return thread;
          });
  private final ReentrantLock lock = new ReentrantLock();
  private final Map<String, Life> current = new HashMap<>(); // guarded by lock
  private final List<Life> ended = new ArrayList<>(); // guarded by lock
  private final AtomicInteger unanswered = new AtomicInteger();
  private ScheduledFuture<?> task;

  /**
   * A watcher of the ephemeral nodes under {@code prefix}.
   *
   * @param answering the servers that may answer now (neither frozen nor dead)
   */
  NodeWatcher(Supplier<List<ZkServers.Server>> answering, String prefix) {
    this.answering = answering;
    this.prefix = prefix;
  }

  void start() {
    task = poller.scheduleWithFixedDelay(this::poll, 0, POLL_MS, TimeUnit.MILLISECONDS);
  }

  private void poll() {
    var unused = readNow();
  }

  /**
   * Reads the nodes now, from the first server that answers, and records what changed; the nodes by
   * path with their owners, or the last poll's if no server answered.
   */
  Map<String, Long> readNow() {
    for (ZkServers.Server server : answering.get()) {
      String dump = ZkServers.fourLetter(server, "dump", 1_000);
      if (dump.contains("Sessions with Ephemerals")) {
        Map<String, Long> nodes = parse(dump, prefix);
        update(nodes, System.nanoTime());
        return nodes;
      }
    }
    unanswered.incrementAndGet();
    return current();
  }

  /** How many reads no server answered (they gave the last poll's nodes). */
  int unanswered() {
    return unanswered.get();
  }

  /** The ephemeral nodes under {@code prefix} in a {@code dump} answer, with their owners. */
  static Map<String, Long> parse(String dump, String prefix) {
    Map<String, Long> nodes = new HashMap<>();
    boolean inEphemerals = false;
    long session = 0;
    for (String line : dump.split("\n")) {
      if (line.startsWith("Sessions with Ephemerals")) {
        inEphemerals = true;
      } else if (inEphemerals && line.startsWith("0x") && line.trim().endsWith(":")) {
        String hex = line.trim();
        session = Long.parseUnsignedLong(hex.substring(2, hex.length() - 1), 16);
      } else if (inEphemerals && line.startsWith("\t") && line.trim().startsWith(prefix)) {
        nodes.put(line.trim(), session);
      }
    }
    return nodes;
  }

  private void update(Map<String, Long> seen, long now) {
    lock.lock();
    try {
      current
          .entrySet()
          .removeIf(
              entry -> {
                Life life = entry.getValue();
                boolean gone =
                    !seen.containsKey(entry.getKey()) || seen.get(entry.getKey()) != life.session();
                if (gone) {
                  ended.add(
                      new Life(life.path(), life.session(), life.appeared(), life.lastSeen(), now));
                }
                return gone;
              });
      seen.forEach(
          (path, session) -> {
            Life life = current.get(path);
            current.put(
                path,
                life == null
                    ? new Life(path, session, now, now, -1)
                    : new Life(path, session, life.appeared(), now, -1));
          });
    } finally {
      lock.unlock();
    }
  }

  /** The nodes alive at the last poll, by path, with their owners. */
  Map<String, Long> current() {
    lock.lock();
    try {
      Map<String, Long> nodes = new HashMap<>();
      current.forEach((path, life) -> nodes.put(path, life.session()));
      return nodes;
    } finally {
      lock.unlock();
    }
  }

  /** Every node seen so far, ended or not. */
  List<Life> lives() {
    lock.lock();
    try {
      List<Life> all = new ArrayList<>(ended);
      all.addAll(current.values());
      return all;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void close() {
    if (task != null) {
      task.cancel(false);
    }
    poller.shutdownNow();
  }
}

package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.queue.QueueOrder;
import io.lockstep.recipes.internal.queue.ReadWriteDriver;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Reads who holds a lock and who waits for it, for Lockstep's and Curator's lock nodes alike.
 *
 * <p>The inspector reads the lock path's children and each node's data and stat; it never creates,
 * deletes or watches anything. It recognises the mutex queue ({@code lock-} nodes, shared by {@link
 * ReentrantMutex}, {@link NonReentrantMutex}, {@link MultiMutex} and Curator's {@code
 * InterProcessMutex}), the read-write queue ({@code __READ__} and {@code __WRIT__} nodes) and
 * Curator's {@code InterProcessSemaphoreMutex} (whose holders are the children of {@code
 * <path>/leases}; when a path has that layout, only the leases are reported). What it reports is a
 * snapshot: the queue may have moved on by the time it is printed.
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.LockInspector;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * CuratorFramework client = ...; // a started client
 * LockInspector.Snapshot snapshot = new LockInspector(client).inspect("/locks/orders");
 * snapshot.holders().forEach(h -> System.out.println(h.node() + " held by session " + h.sessionId()));
 * }</pre>
 */
public final class LockInspector {
  private final CuratorFramework client;

  /**
   * Creates an inspector reading through {@code client} (its namespace applies).
   *
   * @param client a started Curator client
   * @throws NullPointerException if {@code client} is null
   */
  public LockInspector(CuratorFramework client) {
    this.client = Arguments.client(client);
  }

  /** How a node takes part in its queue. */
  public enum Mode {
    /** A mutex node ({@code lock-}). */
    MUTEX,
    /** A reader of a read-write lock ({@code __READ__}). */
    READ,
    /** A writer of a read-write lock ({@code __WRIT__}). */
    WRITE,
    /** A lease of Curator's {@code InterProcessSemaphoreMutex}. */
    LEASE,
    /** A child of the lock path that is none of the above. */
    OTHER
  }

  /**
   * One node of a lock's queue.
   *
   * @param node the node's full path
   * @param mode how the node takes part in the queue
   * @param data the node's data (often the holder's address, or data the caller chose)
   * @param sessionId the ZooKeeper session that owns the node (0 for a node that is not ephemeral)
   * @param age how long ago the node was created: this machine's clock against the server's
   *     creation time (clock skew shows up here)
   */
  public record Entry(String node, Mode mode, byte[] data, long sessionId, Duration age) {
    /**
     * Copies the data.
     *
     * @param node the node's full path
     * @param mode how the node takes part in the queue
     * @param data the node's data
     * @param sessionId the owning session
     * @param age the node's age
     */
    public Entry {
      Objects.requireNonNull(node, "node");
      Objects.requireNonNull(mode, "mode");
      data = data == null ? new byte[0] : data.clone();
      Objects.requireNonNull(age, "age");
    }

    /**
     * A copy of the node's data.
     *
     * @return the data
     */
    @Override
    public byte[] data() {
      return data.clone();
    }
  }

  /**
   * A lock's queue at one moment.
   *
   * @param path the lock path
   * @param holders the nodes that hold the lock, in queue order
   * @param waiters the nodes that wait, in queue order
   */
  public record Snapshot(String path, List<Entry> holders, List<Entry> waiters) {
    /**
     * Copies the lists.
     *
     * @param path the lock path
     * @param holders the holders
     * @param waiters the waiters
     */
    public Snapshot {
      Objects.requireNonNull(path, "path");
      holders = List.copyOf(holders);
      waiters = List.copyOf(waiters);
    }
  }

  /**
   * Reads a lock's holders and waiters. A path that does not exist is an empty lock.
   *
   * @param path the lock path
   * @return the snapshot
   * @throws NullPointerException if {@code path} is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path
   * @throws LockException if ZooKeeper cannot be read
   */
  public Snapshot inspect(String path) {
    Arguments.path(path, "path");
    List<String> children = children(path);
    if (children.contains("leases") && children.contains("locks")) {
      return new Snapshot(path, entries(path + "/leases", children(path + "/leases")), List.of());
    }
    List<String> nodes = QueueOrder.lockNodes(children); // other children are no participants
    boolean readWrite =
        nodes.stream().anyMatch(n -> n.contains("__READ__") || n.contains("__WRIT__"));
    LockDriver order = readWrite ? ReadWriteDriver.READ : LockDriver.mutex();
    List<Entry> queue = entries(path, QueueOrder.sort(nodes, order));
    int holders = readWrite ? readWriteHolders(queue) : Math.min(1, queue.size());
    return new Snapshot(path, queue.subList(0, holders), queue.subList(holders, queue.size()));
  }

  /**
   * Readers ahead of the first writer hold; so does the first writer, if only its own downgrade's
   * read nodes (which carry its sequence number) are ahead of it.
   */
  private static int readWriteHolders(List<Entry> queue) {
    int readers = 0;
    while (readers < queue.size() && queue.get(readers).mode() != Mode.WRITE) {
      readers++;
    }
    if (readers == queue.size()) {
      return readers;
    }
    String writer = sequenceOf(queue.get(readers).node());
    for (int i = 0; i < readers; i++) {
      if (!sequenceOf(queue.get(i).node()).equals(writer)) {
        return readers; // other readers ahead: the writer waits for them
      }
    }
    return readers + 1; // first, or behind its own ties only: the writer holds
  }

  private static String sequenceOf(String node) {
    return node.substring(Math.max(0, node.length() - 10));
  }

  private List<Entry> entries(String parent, List<String> names) {
    List<Entry> entries = new ArrayList<>();
    Instant now = Instant.now();
    boolean leases = parent.endsWith("/leases");
    for (String name : names) {
      String node = ZKPaths.makePath(parent, name);
      Stat stat = new Stat();
      byte[] data;
      try {
        data = client.getData().storingStatIn(stat).forPath(node);
      } catch (KeeperException.NoNodeException gone) {
        continue; // released while we read
      } catch (Exception e) {
        throw failure(parent, e);
      }
      Duration age = Duration.between(Instant.ofEpochMilli(stat.getCtime()), now);
      entries.add(
          new Entry(
              node,
              leases ? Mode.LEASE : modeOf(name),
              data,
              stat.getEphemeralOwner(),
              age.isNegative() ? Duration.ZERO : age));
    }
    return entries;
  }

  private static Mode modeOf(String name) {
    if (name.contains("__WRIT__")) {
      return Mode.WRITE;
    }
    if (name.contains("__READ__")) {
      return Mode.READ;
    }
    return name.contains("lock-") ? Mode.MUTEX : Mode.OTHER;
  }

  private List<String> children(String path) {
    try {
      return client.getChildren().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      return List.of();
    } catch (Exception e) {
      throw failure(path, e);
    }
  }

  private static LockException failure(String path, Exception e) {
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    return new LockException("Could not inspect lock " + path + ": " + e, e);
  }
}

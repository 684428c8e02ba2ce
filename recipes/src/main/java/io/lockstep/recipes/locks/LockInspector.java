package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.queue.LatchDriver;
import io.lockstep.recipes.internal.queue.LeaseDriver;
import io.lockstep.recipes.internal.queue.NodeNames;
import io.lockstep.recipes.internal.queue.QueueOrder;
import io.lockstep.recipes.internal.queue.ReadWriteDriver;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
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
 * InterProcessMutex}), the read-write queue ({@code __READ__} and {@code __WRIT__} nodes), a leader
 * election in Curator's {@code LeaderLatch} layout ({@code latch-} nodes of {@link
 * io.lockstep.recipes.leader.LeaderElection} and {@code LeaderLatch}: the first by sequence leads)
 * and the semaphore layout ({@code <path>/leases} and {@code <path>/locks}, of {@link
 * CountingSemaphore}, Curator's {@code InterProcessSemaphoreV2} and {@code
 * InterProcessSemaphoreMutex}): {@link #inspect(String)} reports every lease as a holder, {@link
 * #inspectSemaphore(String, int)} tells holders from waiters. A {@code LeaderSelector} election is
 * a mutex queue. What it reports is a snapshot: the queue may have moved on by the time it is
 * printed.
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
  /** The most nodes whose children {@link #inspectTree(String)} reads. */
  public static final int MAX_TREE_NODES = 10_000;

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
    /**
     * A lease node of the semaphore layout ({@link CountingSemaphore}, Curator's {@code
     * InterProcessSemaphoreV2} and {@code InterProcessSemaphoreMutex}).
     */
    LEASE,
    /**
     * A participant of a leader election in Curator's {@code LeaderLatch} layout ({@code latch-}):
     * the first by sequence number is the leader, the others wait.
     */
    LATCH,
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
   * Reads a lock's holders and waiters. A path that does not exist is an empty lock. For the
   * semaphore layout, whose holders depend on {@code maxLeases}, every lease is reported as a
   * holder and nothing as a waiter; {@link #inspectSemaphore(String, int)} tells them apart.
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
    if (LeaseDriver.isSemaphoreLayout(children)) {
      String leases = ZKPaths.makePath(path, LeaseDriver.LEASES);
      return new Snapshot(path, entries(leases, children(leases)), List.of());
    }
    List<String> nodes = QueueOrder.lockNodes(children); // other children are no participants
    if (nodes.stream().anyMatch(n -> modeOf(n) == Mode.LATCH)) {
      List<String> latch = nodes.stream().filter(n -> modeOf(n) == Mode.LATCH).toList();
      return headHolds(path, entries(path, QueueOrder.sort(latch, LatchDriver.INSTANCE)));
    }
    boolean readWrite = nodes.stream().anyMatch(ReadWriteDriver::isReadWrite);
    if (!readWrite) {
      return headHolds(path, entries(path, QueueOrder.sort(nodes, LockDriver.mutex())));
    }
    List<Entry> queue = entries(path, QueueOrder.sort(nodes, ReadWriteDriver.READ));
    int holders = ReadWriteDriver.holdersAtHead(names(queue));
    return new Snapshot(path, queue.subList(0, holders), queue.subList(holders, queue.size()));
  }

  /**
   * What a walk of a tree found.
   *
   * @param root the path walked from
   * @param locks the locks with at least one holder or waiter, in path order (depth first)
   * @param complete whether every node under {@code root} was read; false when the walk stopped at
   *     its bound with nodes left unread
   */
  public record Tree(String root, List<Snapshot> locks, boolean complete) {
    /**
     * Copies the list.
     *
     * @param root the path walked from
     * @param locks the locks found
     * @param complete whether the whole tree was read
     */
    public Tree {
      Objects.requireNonNull(root, "root");
      locks = List.copyOf(locks);
    }
  }

  /**
   * Reads every lock at or under {@code root}: a path is a lock when it has a participant node (a
   * protected name, {@code _c_<uuid>-...}) or the semaphore layout ({@code leases} and {@code
   * locks}); each is read as {@link #inspect(String)} reads it. The walk descends into every child
   * that is not a participant (nested lock directories, the keys of a {@link KeyedLocks}), skips
   * ZooKeeper's own {@code /zookeeper} tree (not a client's {@code /zookeeper} under its chroot or
   * namespace), and reads the children of at most {@link #MAX_TREE_NODES} nodes. Lock directories
   * with nobody in them are not listed. A root that does not exist has no locks.
   *
   * @param root the path to walk from, {@code "/"} for the whole tree
   * @return the locks with at least one holder or waiter, in path order (depth first)
   * @throws NullPointerException if {@code root} is null
   * @throws IllegalArgumentException if {@code root} is not a valid absolute ZooKeeper path
   * @throws IllegalStateException if more than {@link #MAX_TREE_NODES} nodes would be read: inspect
   *     a narrower root, or use {@link #inspectTree(String, int)}
   * @throws LockException if ZooKeeper cannot be read
   */
  public List<Snapshot> inspectTree(String root) {
    Tree tree = inspectTree(root, MAX_TREE_NODES);
    if (!tree.complete()) {
      throw new IllegalStateException(
          "more than " + MAX_TREE_NODES + " nodes under " + root + ": inspect a narrower root");
    }
    return tree.locks();
  }

  /**
   * As {@link #inspectTree(String)}, reading the children of at most {@code maxNodes} nodes: a
   * larger tree is reported as far as it was read, not complete.
   *
   * @param root the path to walk from, {@code "/"} for the whole tree
   * @param maxNodes the most nodes whose children are read; at least 1
   * @return the locks found, and whether the whole tree was read
   * @throws NullPointerException if {@code root} is null
   * @throws IllegalArgumentException if {@code root} is not a valid absolute ZooKeeper path, or
   *     {@code maxNodes} is less than 1
   * @throws LockException if ZooKeeper cannot be read
   */
  public Tree inspectTree(String root, int maxNodes) {
    Arguments.path(root, "root");
    if (maxNodes < 1) {
      throw new IllegalArgumentException("maxNodes must be at least 1: " + maxNodes);
    }
    List<Snapshot> locks = new ArrayList<>();
    Deque<String> pending = new ArrayDeque<>(List.of(root));
    for (int read = 0; read < maxNodes && !pending.isEmpty(); read++) {
      String path = pending.pop();
      List<String> children = new ArrayList<>(children(path));
      boolean semaphore = LeaseDriver.isSemaphoreLayout(children);
      if (semaphore || !QueueOrder.lockNodes(children).isEmpty()) {
        Snapshot lock = inspect(path);
        if (!lock.holders().isEmpty() || !lock.waiters().isEmpty()) {
          locks.add(lock);
        }
      }
      children.removeIf(
          c -> NodeNames.isLockNode(c) || semaphore && LeaseDriver.isSemaphorePart(c));
      children.sort(Comparator.reverseOrder()); // popped in order
      for (String child : children) {
        String next = ZKPaths.makePath(path, child);
        if (!next.equals("/zookeeper") || !isZooKeepersOwn(next)) {
          pending.push(next);
        }
      }
    }
    return new Tree(root, locks, pending.isEmpty());
  }

  /**
   * Whether the client's {@code /zookeeper} is ZooKeeper's own tree, which the server makes when it
   * starts (so no transaction created it: its czxid is 0), rather than a node of the client's own:
   * under a chroot or a namespace, {@code /zookeeper} is a path like any other.
   */
  private boolean isZooKeepersOwn(String path) {
    Stat stat;
    try {
      stat = client.checkExists().forPath(path);
    } catch (Exception e) {
      throw failure(path, e);
    }
    return stat == null || stat.getCzxid() == 0;
  }

  /**
   * Runs the inspector as a command: lists every lock under a root ({@link #inspectTree(String)})
   * as a table, or as JSON with {@code --json}. Usage: {@code java -cp <lockstep-recipes jar and
   * its runtime dependencies> io.lockstep.recipes.locks.LockInspector <connect string> <root>
   * [--json] [--namespace <namespace>] [--timeout <seconds>]}; {@code --help} tells more. Exits
   * with 0 on success, 2 on bad arguments, 1 when ZooKeeper cannot be reached or read within the
   * timeout (10 seconds unless given). Console logs go to standard error, never into the output.
   *
   * @param args the command's arguments
   */
  public static void main(String[] args) {
    System.exit(InspectorCommand.main(args));
  }

  /**
   * Reads a semaphore's holders and waiters ({@link CountingSemaphore}, Curator's {@code
   * InterProcessSemaphoreV2}): the first {@code maxLeases} lease nodes by sequence number hold
   * (mode {@link Mode#LEASE}); the lease nodes behind them wait, and so do the nodes of the {@code
   * <path>/locks} mutex queue behind its first (mode {@link Mode#MUTEX}). A path that does not
   * exist is an empty semaphore.
   *
   * <p>This is the honest view of the protocol, not a list of every request: a request that finds
   * no free lease gives its lease node back and queues for the {@code locks} mutex, and only the
   * mutex holder creates a lease node that waits. So at most one waiting lease node exists (the
   * mutex holder's, while it waits; between its grant and its create it has none, and its mutex
   * node is then not reported), and every other waiter is a node of the {@code locks} queue. A
   * lease node counted as a holder may be a fast try that is about to give its node back.
   *
   * @param path the semaphore's path
   * @param maxLeases the semaphore's {@code maxLeases}, as its participants use it
   * @return the snapshot: the lease holders in sequence order; the waiting lease node, then the
   *     {@code locks} queue's waiters in queue order
   * @throws NullPointerException if {@code path} is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path, or
   *     {@code maxLeases} is below 1
   * @throws LockException if ZooKeeper cannot be read
   */
  public Snapshot inspectSemaphore(String path, int maxLeases) {
    Arguments.path(path, "path");
    LeaseDriver order = new LeaseDriver(maxLeases);
    String leasesPath = ZKPaths.makePath(path, LeaseDriver.LEASES);
    String locksPath = ZKPaths.makePath(path, LeaseDriver.LOCKS);
    List<String> leaseNodes = QueueOrder.lockNodes(children(leasesPath));
    List<Entry> leases = entries(leasesPath, QueueOrder.sort(leaseNodes, order));
    List<String> lockNodes = QueueOrder.lockNodes(children(locksPath));
    List<Entry> locks = entries(locksPath, QueueOrder.sort(lockNodes, LockDriver.mutex()));
    int holders = Math.min(maxLeases, leases.size());
    List<Entry> waiters = new ArrayList<>(leases.subList(holders, leases.size()));
    waiters.addAll(locks.subList(Math.min(1, locks.size()), locks.size()));
    return new Snapshot(path, leases.subList(0, holders), waiters);
  }

  /** A queue whose first node alone holds: a mutex, or an election's leader. */
  private static Snapshot headHolds(String path, List<Entry> queue) {
    int holders = Math.min(1, queue.size());
    return new Snapshot(path, queue.subList(0, holders), queue.subList(holders, queue.size()));
  }

  private List<Entry> entries(String parent, List<String> names) {
    List<Entry> entries = new ArrayList<>();
    Instant now = Instant.now();
    boolean leases = parent.endsWith("/" + LeaseDriver.LEASES);
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

  /** The entries' node names (the last part of each path), in order. */
  private static List<String> names(List<Entry> entries) {
    return entries.stream().map(entry -> ZKPaths.getNodeFromPath(entry.node())).toList();
  }

  private static Mode modeOf(String name) {
    if (ReadWriteDriver.isWriter(name)) {
      return Mode.WRITE;
    }
    if (ReadWriteDriver.isReader(name)) {
      return Mode.READ;
    }
    if (name.contains(LatchDriver.LOCK_NAME)) {
      return Mode.LATCH;
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

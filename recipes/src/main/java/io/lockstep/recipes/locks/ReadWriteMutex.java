package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.owner.Ownership;
import io.lockstep.recipes.internal.owner.ReadWriteOwnership;
import io.lockstep.recipes.internal.queue.ReadWriteDriver;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;

/**
 * A reentrant read-write lock across processes, on ZooKeeper: the drop-in replacement for Curator's
 * {@code InterProcessReadWriteLock}.
 *
 * <p><b>Held and owned.</b> Any number of readers may hold the {@link #readLock() read lock} at
 * once, while no writer holds the {@link #writeLock() write lock}; a writer holds it alone. Holds
 * are owned by threads and reentrant per thread. The write holder may also take the read lock (a
 * downgrade) and then release the write lock, keeping the read lock. The reverse, taking the write
 * lock while holding only the read lock, would wait for itself forever: a timed attempt returns
 * false at once, an untimed one throws {@link IllegalMonitorStateException}.
 *
 * <p><b>Order.</b> Fair: readers and writers queue as {@code <path>/_c_<uuid>-__READ__<seq>} and
 * {@code <path>/_c_<uuid>-__WRIT__<seq>} in one queue sorted by sequence number, exactly Curator's
 * layout, so Curator's and Lockstep's read-write locks on one path share and exclude each other
 * correctly. A reader holds when no writer is ahead of it and otherwise watches the nearest writer
 * ahead (Curator watches the first one; the nearest wakes fewer readers and is equally safe). A
 * writer holds when first and otherwise watches its immediate predecessor. A downgrade creates a
 * read node carrying the write node's sequence number, as Curator does; such ties, Curator's or
 * ours, count as readers standing at the writer's place.
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.ReadWriteMutex;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * CuratorFramework client = ...; // a started client
 * FencedStore store = ...; // your store: refuses stale tokens (docs/getting-started.md)
 * ReadWriteMutex catalog = ReadWriteMutex.builder(client, "/locks/catalog").build();
 * catalog.readLock().acquire();
 * try {
 *   System.out.println(store.read("catalog")); // other readers may read meanwhile
 * } finally {
 *   catalog.readLock().release();
 * }
 * }</pre>
 *
 * <p><b>Failures.</b> As for {@link ReentrantMutex}: timeouts return false, interrupts throw,
 * ZooKeeper failures throw {@link LockException}, none leaves a node or a watch behind, and loss
 * while held is reported to each lock's state listeners. An uncontended read or write cycle costs 3
 * requests.
 *
 * <p><b>Limits.</b> See {@link FencedLock}. Fence writes with the write lock's token. Readers share
 * the lock, so readers' tokens say nothing about each other.
 */
public final class ReadWriteMutex implements AutoCloseable {
  private final String path;
  private final ReadLock readLock;
  private final WriteLock writeLock;

  /**
   * Creates a read-write lock on {@code path}; lock nodes carry the client's default data.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param path the lock path
   * @throws NullPointerException if {@code client} or {@code path} is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path
   */
  public ReadWriteMutex(CuratorFramework client, String path) {
    this(client, path, null);
  }

  /**
   * Creates a read-write lock on {@code path} whose lock nodes carry {@code lockData}.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param path the lock path
   * @param lockData the data of every lock node, or null for the client's default data
   * @throws NullPointerException if {@code client} or {@code path} is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path
   */
  public ReadWriteMutex(CuratorFramework client, String path, byte[] lockData) {
    this(client, path, lockData, 0, 0);
  }

  private ReadWriteMutex(
      CuratorFramework client, String path, byte[] lockData, int localHandoffs, long lingerNanos) {
    Arguments.client(client);
    Arguments.path(path, "path");
    int bound =
        localHandoffs > 0 || lingerNanos == 0 ? localHandoffs : LocalHandoff.DEFAULT_MAX_IN_A_ROW;
    ReadWriteOwnership holds = new ReadWriteOwnership(client, path, lockData, bound, lingerNanos);
    this.path = path;
    this.writeLock =
        new WriteLock(
            holds.writes(),
            QueueView.of(
                "ReadWriteMutex.WriteLock",
                path,
                ReadWriteDriver.WRITE,
                ReadWriteDriver::isWriter));
    this.readLock =
        new ReadLock(
            holds.reads(),
            QueueView.of(
                "ReadWriteMutex.ReadLock", path, ReadWriteDriver.READ, ReadWriteDriver::isReader));
  }

  /**
   * Starts building a read-write lock on {@code path}, the shape every recipe shares.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param path the lock path
   * @return a new builder
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path
   */
  public static Builder builder(CuratorFramework client, String path) {
    return new Builder(Arguments.client(client), Arguments.path(path, "path"));
  }

  /**
   * The options of a {@link ReadWriteMutex}: the data of its lock nodes, and local handoff. Not
   * thread-safe; {@link #build()} makes the lock.
   */
  public static final class Builder extends RecipeBuilder {
    private byte[] lockData;
    private int localHandoffs;
    private long lingerNanos;

    private Builder(CuratorFramework client, String path) {
      super(client, path);
    }

    /**
     * Gives every lock node {@code lockData} instead of the client's default data (Curator's {@code
     * InterProcessReadWriteLock(client, path, lockData)}).
     *
     * @param lockData the data, copied; null for the client's default data
     * @return this builder
     */
    public Builder lockData(byte[] lockData) {
      this.lockData = lockData == null ? null : lockData.clone();
      return this;
    }

    /**
     * Shares the read lock among this process's readers and hands the write lock from writer to
     * writer inside this process, with the default bound of {@value
     * LocalHandoff#DEFAULT_MAX_IN_A_ROW}; see {@link #localHandoff(int)}.
     *
     * @return this builder
     */
    public Builder localHandoff() {
      return localHandoff(LocalHandoff.DEFAULT_MAX_IN_A_ROW);
    }

    /**
     * Shares the read lock among this process's readers (read sharing) and hands the write lock
     * from writer to writer inside this process (cohort locking). Every lock object of this client
     * on this path built this way shares one read node and one write place: concurrent readers of
     * the process hold on one read node, the first one queueing and later ones joining it in memory
     * while it is granted and no writer of this process waits; the node goes when the last of them
     * lets go. Writers take turns on the process's write node as a mutex with {@link
     * MutexBuilder#localHandoff(int) local handoff} does. So that no other process starves, readers
     * stop joining once a writer of another process is found queued (the queue is read after {@code
     * maxInARow} joins in a row), and the write node goes back after {@code maxInARow} local
     * handoffs in a row while another participant may wait. See {@link LocalHandoff} for tokens,
     * ownership checks and what stays the same.
     *
     * @param maxInARow the most joins or local handoffs in a row before the queue is read; at least
     *     1
     * @return this builder
     * @throws IllegalArgumentException if {@code maxInARow} is less than 1
     */
    public Builder localHandoff(int maxInARow) {
      this.localHandoffs = Arguments.atLeastOne(maxInARow, "maxInARow");
      return this;
    }

    /**
     * Keeps the process's read node for up to {@code linger} after its last local reader lets go,
     * while no writer waits or is seen and no other participant queues (lock caching for readers):
     * a read in that time joins the kept node at once, in memory, with no request. The node goes
     * back as soon as a writer of this process waits or another participant queues, and when the
     * linger runs out. Implies {@link #localHandoff()} unless a bound was set; see {@link
     * LocalHandoff}.
     *
     * @param linger how long the node is kept; positive, at most {@link LocalHandoff#MAX_LINGER}
     * @return this builder
     * @throws NullPointerException if {@code linger} is null
     * @throws IllegalArgumentException if {@code linger} is not positive or exceeds the maximum
     */
    public Builder linger(Duration linger) {
      this.lingerNanos = LocalHandoff.checkLinger(linger);
      return this;
    }

    /**
     * Makes the lock. Nothing is sent to ZooKeeper until the first acquire.
     *
     * @return a new lock object
     */
    public ReadWriteMutex build() {
      return new ReadWriteMutex(client, path, lockData, localHandoffs, lingerNanos);
    }
  }

  /**
   * Closes both sides of this lock object: neither starts a new hold from now on ({@code acquire},
   * {@code hold}, {@code acquireAsync} and the {@code Lock} views' methods throw {@link
   * IllegalStateException}; so does a downgrade, which takes a new read node), and the acquires
   * under way on either side are withdrawn (they throw {@link IllegalStateException}; a grant that
   * won the race is kept). Holds are not touched: they end as usual. Idempotent.
   */
  @Override
  public void close() {
    readLock.holds.close();
    writeLock.holds.close();
  }

  /**
   * The lock shared by readers.
   *
   * @return the read lock
   */
  public ReadLock readLock() {
    return readLock;
  }

  /**
   * The lock held by one writer at a time.
   *
   * @return the write lock
   */
  public WriteLock writeLock() {
    return writeLock;
  }

  @Override
  public String toString() {
    return "ReadWriteMutex[" + path + "]";
  }

  /**
   * The read side of a {@link ReadWriteMutex}: shared with other readers, excluded by a writer.
   * Reentrant per thread; the write holder's thread may take it (a downgrade).
   *
   * <p>A thread holding the write lock takes the read lock at once, tying its read node to its
   * write node; ZooKeeper refuses the read node if the write node is gone. Either {@code acquire}
   * throws {@link LockOwnershipLostException} if the current thread's write hold, or its read hold,
   * was lost.
   */
  public static final class ReadLock extends ThreadOwnedLock {
    private ReadLock(Ownership holds, QueueView queue) {
      super(holds, queue);
    }
  }

  /**
   * The write side of a {@link ReadWriteMutex}: held by one writer at a time, excluding readers.
   * Reentrant per thread; refused to a thread that holds only the read lock, as the upgrade would
   * wait for itself forever: {@link #acquire()} then throws {@link IllegalMonitorStateException},
   * and {@link #acquire(long, TimeUnit)} returns false at once, sending nothing.
   */
  public static final class WriteLock extends ThreadOwnedLock {
    private WriteLock(Ownership holds, QueueView queue) {
      super(holds, queue);
    }
  }
}

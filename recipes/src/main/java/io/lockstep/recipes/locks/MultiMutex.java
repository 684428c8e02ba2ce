package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.queue.ReadWriteDriver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.listen.Listenable;
import org.apache.curator.framework.recipes.locks.InterProcessLock;

/**
 * A lock over several paths at once that cannot deadlock: the replacement for Curator's {@code
 * InterProcessMultiLock}.
 *
 * <p><b>Held and owned.</b> The lock is held when every path is held; a hold is owned by the thread
 * that acquired it and is reentrant, as Curator's multi-lock over mutexes is. Each path is locked
 * in its own mode: mutex (the same queue as {@link ReentrantMutex} and Curator's {@code
 * InterProcessMutex}), or the read or write side of a {@link ReadWriteMutex}; see {@link
 * #builder(CuratorFramework)}.
 *
 * <p><b>Order, and why it cannot deadlock.</b> An acquire creates its node in every path in one
 * ZooKeeper transaction. ZooKeeper applies transactions one at a time in zxid order, and each
 * path's sequence numbers follow that order, so of any two multi-locks the one enqueued first is
 * ahead in every queue they share. A waiter only ever waits for nodes created before its own; a
 * cycle of waiters would need someone to wait for a later node, so there is none, whatever order
 * callers list the paths in. Curator's {@code InterProcessMultiLock} enqueues path by path and
 * deadlocks when two callers list shared paths in different orders.
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.MultiMutex;
 * import java.util.ArrayList;
 * import java.util.List;
 * import org.apache.curator.framework.CuratorFramework;
 * import org.apache.curator.framework.api.transaction.CuratorOp;
 *
 * CuratorFramework client = ...; // a started client
 * byte[] debit = ...; // account 17's new data
 * byte[] credit = ...; // account 4's new data
 * MultiMutex transfer = new MultiMutex(client, List.of("/locks/accounts/17", "/locks/accounts/4"));
 * transfer.acquire();
 * try {
 *   List<CuratorOp> ops = new ArrayList<>(transfer.ownershipChecks());
 *   ops.add(client.transactionOp().setData().forPath("/accounts/17", debit));
 *   ops.add(client.transactionOp().setData().forPath("/accounts/4", credit));
 *   client.transaction().forOperations(ops);
 * } finally {
 *   transfer.release();
 * }
 * }</pre>
 *
 * <p><b>Failures.</b> The budget of a timed acquire covers all paths together (Curator gives each
 * path the whole budget). A timeout, an interrupt or a ZooKeeper failure deletes every node in one
 * transaction, as does a release. If the connection is lost during the enqueuing transaction, the
 * lock finds out whether it committed (it is all or nothing); missing lock directories are created
 * as containers, again if one is reaped in between. The fencing token is the zxid of the enqueuing
 * transaction (or of the read that granted it, if later), and {@link #ownershipChecks()} returns a
 * check for every node. Loss is reported when the session is lost, and on a reconnect that finds a
 * node missing; a node deleted by a third party while connected is noticed only by the ownership
 * checks, because watching every node would cost a request per path. Keep lock paths apart from
 * data paths: empty lock directories are container nodes that the server deletes.
 *
 * <p><b>Cost.</b> An uncontended acquire and release is 3 ZooKeeper requests whatever the number of
 * paths: one transaction of creates, one read-only transaction of child lists, one transaction of
 * deletes. Curator's multi-lock needs 3 per path.
 *
 * <p><b>Limits.</b> The guarantee covers these atomic multi-locks and single-path locks. A caller
 * that acquires another lock while holding one (holding A, then acquiring B) steps outside it, as
 * do Curator's path-by-path multi-locks and the composed form {@link #MultiMutex(List)}. Paths must
 * be distinct and none may lie inside another. See also {@link FencedLock}.
 */
public final class MultiMutex implements FencedLock, AutoCloseable {
  private final FencedLock delegate;

  /**
   * Creates a multi-lock that takes every path in mutex mode, excluding {@link ReentrantMutex},
   * {@link NonReentrantMutex} and Curator's {@code InterProcessMutex} on the same paths.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param paths the lock paths, in any order
   * @throws NullPointerException if {@code client}, {@code paths} or one of the paths is null
   * @throws IllegalArgumentException if {@code paths} is empty, holds an invalid or duplicate path
   *     or a path inside another, or is too large for one ZooKeeper transaction (for a client not
   *     started yet, the size is checked at each acquire instead, which then throws this with
   *     nothing sent)
   */
  public MultiMutex(CuratorFramework client, List<String> paths) {
    this(mutexes(client, paths));
  }

  private static Builder mutexes(CuratorFramework client, List<String> paths) {
    Builder builder = builder(client);
    Objects.requireNonNull(paths, "paths").forEach(builder::mutex);
    return builder;
  }

  private MultiMutex(Builder builder) {
    this.delegate =
        AtomicMultiLock.of(builder.client, builder.paths, builder.drivers, builder.lockData);
  }

  /**
   * Composes arbitrary locks the way Curator's {@code InterProcessMultiLock} does: acquired one
   * after another in list order within one total budget, released in reverse order, all released
   * when one fails, every release failure reported (the first thrown, the rest suppressed). This
   * form is <em>not</em> deadlock-free: two callers composing shared locks in different orders can
   * deadlock. It has no single fencing token; its ownership checks and state listeners are
   * available when every lock is a {@link FencedLock}.
   *
   * @param locks the locks, acquired in this order
   * @throws NullPointerException if {@code locks} or one of its elements is null
   * @throws IllegalArgumentException if {@code locks} is empty
   */
  public MultiMutex(List<InterProcessLock> locks) {
    Objects.requireNonNull(locks, "locks");
    if (locks.isEmpty()) {
      throw new IllegalArgumentException("locks must not be empty");
    }
    for (int i = 0; i < locks.size(); i++) {
      Objects.requireNonNull(locks.get(i), "locks[" + i + "]");
    }
    this.delegate = new ComposedLock(locks);
  }

  /**
   * Starts a multi-lock whose paths each have their own mode:
   *
   * <pre>{@code
   * import io.lockstep.recipes.locks.MultiMutex;
   * import org.apache.curator.framework.CuratorFramework;
   *
   * CuratorFramework client = ...; // a started client
   * MultiMutex lock = MultiMutex.builder(client).write("/ledger").read("/rates").build();
   * }</pre>
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @return a new builder
   * @throws NullPointerException if {@code client} is null
   */
  public static Builder builder(CuratorFramework client) {
    return new Builder(Arguments.client(client));
  }

  @Override
  public void acquire() throws InterruptedException {
    delegate.acquire();
  }

  /**
   * Closes this lock object: it starts no new hold from now on ({@code acquire}, {@code hold},
   * {@code acquireAsync} and the {@link #asLock() Lock} view's methods throw {@link
   * IllegalStateException}), and its acquires under way are withdrawn (they throw {@link
   * IllegalStateException}; a grant that won the race is kept). Holds are not touched. A multi-lock
   * composed of lock objects ({@link #MultiMutex(List)}) leaves them open, as they are the
   * caller's: an acquire under way finishes the lock it waits for, then gives back what it took and
   * throws. Idempotent.
   */
  @Override
  public void close() {
    if (delegate instanceof AbstractFencedLock atomic) {
      atomic.holds.close();
    } else {
      ((ComposedLock) delegate).close();
    }
  }

  @Override
  public boolean acquire(long time, TimeUnit unit) throws InterruptedException {
    return delegate.acquire(time, unit);
  }

  @Override
  public void release() {
    delegate.release();
  }

  /**
   * Whether every path is held in this process (for the atomic form: by some thread through this
   * object).
   *
   * @return true if held
   */
  @Override
  public boolean isAcquiredInThisProcess() {
    return delegate.isAcquiredInThisProcess();
  }

  /**
   * {@inheritDoc}
   *
   * <p>For the atomic form, the zxid of the transaction that enqueued all nodes, or, if later, the
   * zxid at which the read that granted it saw its queues.
   *
   * @throws UnsupportedOperationException for the composed form
   */
  @Override
  public long fencingToken() {
    return delegate.fencingToken();
  }

  /**
   * {@inheritDoc}
   *
   * @throws UnsupportedOperationException for the composed form, if a lock is not a {@link
   *     FencedLock} and is not held
   */
  @Override
  public void checkHeld() {
    delegate.checkHeld();
  }

  /**
   * {@inheritDoc}
   *
   * @throws UnsupportedOperationException for the composed form, unless every lock is a {@link
   *     FencedLock}
   */
  @Override
  public List<CuratorOp> ownershipChecks() {
    return delegate.ownershipChecks();
  }

  /**
   * {@inheritDoc}
   *
   * <p>For the composed form, a listener added here is added to every lock.
   *
   * @throws UnsupportedOperationException for the composed form, unless every lock is a {@link
   *     FencedLock}
   */
  @Override
  public Listenable<LockStateListener> getStateListenable() {
    return delegate.getStateListenable();
  }

  /**
   * {@inheritDoc}
   *
   * <p>For the composed form: each lock's hold in list order; available when every lock is a {@link
   * FencedLock}.
   */
  @Override
  public CompletionStage<LockHold> acquireAsync() {
    return delegate.acquireAsync();
  }

  @Override
  public CompletionStage<LockHold> acquireAsync(Duration timeout) {
    return delegate.acquireAsync(timeout);
  }

  @Override
  public CompletionStage<LockHold> acquireAsync(Duration timeout, Executor executor) {
    return delegate.acquireAsync(timeout, executor);
  }

  @Override
  public LockHold hold() throws InterruptedException {
    return delegate.hold();
  }

  @Override
  public Optional<LockHold> tryHold(Duration timeout) throws InterruptedException {
    return delegate.tryHold(timeout);
  }

  @Override
  public LockView asLock() {
    return delegate.asLock();
  }

  /**
   * The nodes of every path's queue, path after path, each in queue order.
   *
   * @return the participant nodes as full paths
   */
  @Override
  public Collection<String> getParticipantNodes() {
    return delegate.getParticipantNodes();
  }

  /** The atomic or the composed form. */
  FencedLock delegate() {
    return delegate;
  }

  @Override
  public String toString() {
    return delegate.toString();
  }

  /**
   * Collects the paths of an atomic {@link MultiMutex} and the mode of each. Not thread-safe;
   * {@link #build()} checks everything and makes an immutable lock.
   */
  public static final class Builder {
    private final CuratorFramework client;
    private final List<String> paths = new ArrayList<>();
    private final List<LockDriver> drivers = new ArrayList<>();
    private byte[] lockData; // confined to the building thread, like the lists

    private Builder(CuratorFramework client) {
      this.client = client;
    }

    /**
     * Adds a path locked in mutex mode (Curator's {@code InterProcessMutex} queue).
     *
     * @param path the lock path
     * @return this builder
     */
    public Builder mutex(String path) {
      return add(path, LockDriver.mutex());
    }

    /**
     * Adds a path whose read lock is taken (the queue of a {@link ReadWriteMutex} or Curator's
     * {@code InterProcessReadWriteLock} on that path).
     *
     * @param path the lock path
     * @return this builder
     */
    public Builder read(String path) {
      return add(path, ReadWriteDriver.READ);
    }

    /**
     * Adds a path whose write lock is taken (the queue of a {@link ReadWriteMutex} or Curator's
     * {@code InterProcessReadWriteLock} on that path).
     *
     * @param path the lock path
     * @return this builder
     */
    public Builder write(String path) {
      return add(path, ReadWriteDriver.WRITE);
    }

    /**
     * Sets the data every lock node carries; by default the client's default data.
     *
     * @param lockData the node data, or null for the client's default
     * @return this builder
     */
    public Builder lockData(byte[] lockData) {
      this.lockData = lockData == null ? null : lockData.clone();
      return this;
    }

    private Builder add(String path, LockDriver driver) {
      paths.add(path);
      drivers.add(driver);
      return this;
    }

    /**
     * Checks the paths and builds the lock. Nothing is sent to ZooKeeper until the first acquire.
     *
     * @return the multi-lock
     * @throws NullPointerException if a path is null
     * @throws IllegalArgumentException if no path was added, a path is invalid, a path was added
     *     twice or lies inside another, or the transaction would be too large for ZooKeeper (for a
     *     client not started yet, the size is checked at each acquire instead, which then throws
     *     this with nothing sent)
     */
    public MultiMutex build() {
      return new MultiMutex(this);
    }
  }
}

package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.owner.Handles;
import io.lockstep.recipes.internal.owner.Ownership;
import io.lockstep.recipes.internal.owner.Revocation;
import io.lockstep.recipes.internal.owner.ThreadOwnership;
import io.lockstep.recipes.internal.queue.QueueOrder;
import io.lockstep.recipes.internal.queue.Slot;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.locks.Revocable;
import org.apache.curator.framework.recipes.locks.RevocationListener;

/**
 * A reentrant mutual-exclusion lock across processes, on ZooKeeper: the drop-in replacement for
 * Curator's {@code InterProcessMutex}.
 *
 * <p><b>Held and owned.</b> A hold is owned by the thread that acquired it; that thread may acquire
 * again (each acquire costs no request and needs a matching release) and only that thread may
 * release. Different threads of one process contend like different processes.
 *
 * <p><b>Order.</b> Fair, first come first served: each acquirer appends an ephemeral sequential
 * node {@code <path>/_c_<uuid>-lock-<seq>}; the first node holds, every other watches its immediate
 * predecessor, so a release wakes exactly one waiter. This is Curator's node layout and order, so a
 * {@code ReentrantMutex} and an {@code InterProcessMutex} on the same path exclude each other (a
 * rolling upgrade is safe), and so does a {@link NonReentrantMutex}. A {@link LockDriver} passed to
 * the constructor orders the queue differently.
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.ReentrantMutex;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * CuratorFramework client = ...; // a started client
 * FencedStore store = ...; // your store: refuses stale tokens (docs/getting-started.md)
 * ReentrantMutex lock = new ReentrantMutex(client, "/locks/orders");
 * lock.acquire();
 * try {
 *   store.write("order-17", "paid", lock.fencingToken());
 * } finally {
 *   lock.release();
 * }
 * }</pre>
 *
 * <p><b>Failures.</b> A timed acquire that runs out of time returns false; an interrupted one
 * throws {@link InterruptedException}; ZooKeeper failures beyond the client's retry policy throw
 * {@link LockException}. Each of them leaves no node and no watch behind. If the session expires
 * while waiting, the acquire enqueues again as the client's retry policy allows. While held, the
 * state listeners hear {@link LockState#AT_RISK} when the connection is suspended, {@link
 * LockState#HELD} when it comes back with our node intact, and {@link LockState#LOST} when the
 * session is lost or our node is deleted; {@link #checkHeld()} then throws {@link
 * LockOwnershipLostException}. Releasing a lock one does not own throws {@link
 * IllegalMonitorStateException}.
 *
 * <p><b>Cost.</b> An uncontended acquire and release is 3 ZooKeeper requests (create, getChildren,
 * delete), the floor for a queue lock; under contention a holder adds one small read to watch its
 * own node. The fencing token comes with the create at no extra cost.
 *
 * <p><b>Limits.</b> See {@link FencedLock}: a paused holder can outlive its session; fence the
 * writes that matter. Do not acquire from a ZooKeeper or Curator callback thread: waiting there
 * blocks the events the lock waits for.
 */
public final class ReentrantMutex extends AbstractFencedLock
    implements Revocable<ReentrantMutex>, AutoCloseable {
  private final CuratorFramework client;
  private final String path;
  private final LockDriver driver;
  private final Revocation revocation;

  /**
   * Creates a lock on {@code path} with Curator's mutex order. Nothing is sent to ZooKeeper until
   * the first acquire; missing parents are then created as container nodes.
   *
   * @param client a started Curator client; its retry policy, namespace and ACL provider apply
   * @param path the lock path
   * @throws NullPointerException if {@code client} or {@code path} is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path
   */
  public ReentrantMutex(CuratorFramework client, String path) {
    this(client, path, LockDriver.mutex());
  }

  /**
   * Creates a lock on {@code path} ordered by {@code driver}.
   *
   * @param client a started Curator client; its retry policy, namespace and ACL provider apply
   * @param path the lock path
   * @param driver the queue order; every participant of the path must agree with it
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path, or the
   *     driver's lock name cannot be part of a node name
   */
  public ReentrantMutex(CuratorFramework client, String path, LockDriver driver) {
    this(client, path, driver, new Revocation(), 0, 0);
  }

  private ReentrantMutex(
      CuratorFramework client,
      String path,
      LockDriver driver,
      Revocation revocation,
      int localHandoffs,
      long lingerNanos) {
    super(holds(client, path, driver, revocation, localHandoffs, lingerNanos));
    this.client = client;
    this.path = path;
    this.driver = driver;
    this.revocation = localHandoffs > 0 || lingerNanos > 0 ? null : revocation;
  }

  /**
   * Starts a lock on {@code path} with options beyond the constructors':
   *
   * <pre>{@code
   * import io.lockstep.recipes.locks.ReentrantMutex;
   * import org.apache.curator.framework.CuratorFramework;
   *
   * CuratorFramework client = ...; // a started client
   * ReentrantMutex lock = ReentrantMutex.builder(client, "/locks/orders").localHandoff(8).build();
   * }</pre>
   *
   * @param client a started Curator client; its retry policy, namespace and ACL provider apply
   * @param path the lock path
   * @return a new builder
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path
   */
  public static Builder builder(CuratorFramework client, String path) {
    return new Builder(Arguments.client(client), Arguments.path(path, "path"));
  }

  /**
   * The options of a {@link ReentrantMutex}: its queue order and local handoff. Not thread-safe;
   * {@link #build()} checks them and makes the lock.
   */
  public static final class Builder {
    private final CuratorFramework client;
    private final String path;
    private LockDriver driver = LockDriver.mutex();
    private int localHandoffs;
    private long lingerNanos;

    private Builder(CuratorFramework client, String path) {
      this.client = client;
      this.path = path;
    }

    /**
     * Orders the queue with {@code driver} instead of Curator's mutex order.
     *
     * @param driver the queue order; every participant of the path must agree with it
     * @return this builder
     * @throws NullPointerException if {@code driver} is null
     */
    public Builder driver(LockDriver driver) {
      this.driver = Objects.requireNonNull(driver, "driver");
      return this;
    }

    /**
     * Hands the lock from holder to holder inside this process (cohort locking), with the default
     * bound of {@value LocalHandoff#DEFAULT_MAX_IN_A_ROW} handoffs in a row; see {@link
     * #localHandoff(int)}.
     *
     * @return this builder
     */
    public Builder localHandoff() {
      return localHandoff(LocalHandoff.DEFAULT_MAX_IN_A_ROW);
    }

    /**
     * Hands the lock from holder to holder inside this process (cohort locking). Every lock object
     * of this client on this path built this way shares one place in the queue: one node for the
     * process. Its local contenders (threads, handles, asynchronous waiters) take turns in memory,
     * in arrival order, and the lock goes back through ZooKeeper only when no local contender
     * waits, or after {@code maxInARow} local handoffs in a row while another participant may wait,
     * so no other process starves. This changes Curator's strict queue order, hence the opt-in; see
     * {@link LocalHandoff} for what it costs and what stays the same. A lock that hands off locally
     * cannot be made revocable.
     *
     * @param maxInARow the most local handoffs in a row while others may wait; at least 1
     * @return this builder
     * @throws IllegalArgumentException if {@code maxInARow} is less than 1
     */
    public Builder localHandoff(int maxInARow) {
      this.localHandoffs = LocalHandoff.checkBound(maxInARow);
      return this;
    }

    /**
     * Keeps the process's place in the queue for up to {@code linger} after the last local release,
     * while no other participant queues (lock caching): an acquire in that time holds at once, in
     * memory, with no request. The place goes back as soon as another participant queues (when no
     * local contender holds; else at the release), and when the linger runs out. Implies {@link
     * #localHandoff()} unless a bound was set; see {@link LocalHandoff} for when it pays and what
     * it costs other processes.
     *
     * @param linger how long the place is kept; positive, at most {@link LocalHandoff#MAX_LINGER}
     * @return this builder
     * @throws NullPointerException if {@code linger} is null
     * @throws IllegalArgumentException if {@code linger} is not positive or exceeds the maximum
     */
    public Builder linger(Duration linger) {
      this.lingerNanos = LocalHandoff.checkLinger(linger);
      return this;
    }

    /**
     * Checks the options and makes the lock. Nothing is sent to ZooKeeper until the first acquire.
     *
     * @return the lock
     * @throws IllegalArgumentException if the driver's lock name cannot be part of a node name
     */
    public ReentrantMutex build() {
      return new ReentrantMutex(client, path, driver, new Revocation(), localHandoffs, lingerNanos);
    }
  }

  private static Ownership holds(
      CuratorFramework client,
      String path,
      LockDriver driver,
      Revocation revocation,
      int localHandoffs,
      long lingerNanos) {
    Arguments.client(client);
    Arguments.path(path, "path");
    Objects.requireNonNull(driver, "driver");
    Arguments.lockName(driver.lockName());
    Slot slot = Slot.of(path, driver, null);
    LockSettings settings = LockSettings.of(client, path, "ReentrantMutex");
    AttemptFactory attempts = LocalHandoff.attempts(settings, slot, localHandoffs, lingerNanos);
    return new ThreadOwnership(
        attempts,
        thread -> List.of(revocation.slotFor(slot)),
        revocation,
        new Handles(attempts, () -> List.of(revocation.slotFor(slot)), revocation));
  }

  /**
   * A check operation on the current thread's lock node, for the caller's own transaction: it
   * commits only while the node, and so the lock, exists.
   *
   * @return the check operation
   * @throws IllegalMonitorStateException if the current thread does not hold the lock
   * @throws LockOwnershipLostException if the hold was lost
   */
  public CuratorOp ownershipCheck() {
    return ownershipChecks().get(0);
  }

  /**
   * Whether the current thread holds the lock.
   *
   * @return true if the current thread holds it
   */
  public boolean isOwnedByCurrentThread() {
    return holds.holdCount() > 0;
  }

  /**
   * How many times the current thread holds the lock: acquires minus releases.
   *
   * @return the hold count, 0 if the current thread does not hold the lock
   */
  public int getHoldCount() {
    return holds.holdCount();
  }

  @Override
  public Collection<String> getParticipantNodes() {
    return QueueOrder.participants(client, path, driver, name -> true);
  }

  /**
   * Makes later acquisitions revocable with Curator's protocol: when another process calls {@code
   * Revoker.attemptRevoke(client, nodePath)} on the holder's node, {@code listener} is called on a
   * Lockstep thread (never ZooKeeper's event thread). The holder decides whether to release. Costs
   * one extra request per acquisition, as in Curator.
   *
   * @param listener called when a revocation is requested
   * @throws NullPointerException if {@code listener} is null
   * @throws UnsupportedOperationException if the lock hands off locally
   */
  @Override
  public void makeRevocable(RevocationListener<ReentrantMutex> listener) {
    makeRevocable(listener, Runnable::run);
  }

  /**
   * Makes later acquisitions revocable with Curator's protocol, calling {@code listener} on {@code
   * executor}.
   *
   * @param listener called when a revocation is requested
   * @param executor runs the listener
   * @throws NullPointerException if an argument is null
   * @throws UnsupportedOperationException if the lock hands off locally
   */
  @Override
  public void makeRevocable(RevocationListener<ReentrantMutex> listener, Executor executor) {
    Objects.requireNonNull(listener, "listener");
    Objects.requireNonNull(executor, "executor");
    if (revocation == null) {
      throw new UnsupportedOperationException(
          "A lock that hands off locally cannot be revocable: its node is its process's, not a"
              + " holder's: "
              + this);
    }
    revocation.enable(() -> executor.execute(() -> listener.revocationRequested(this)));
  }

  /**
   * Closes this lock object: it starts no new hold from now on ({@code acquire}, {@code hold},
   * {@code acquireAsync} and the {@link #asLock() Lock} view's methods throw {@link
   * IllegalStateException}), its acquires under way are withdrawn (they throw {@link
   * IllegalStateException}, an asynchronous one fails with it, and they leave nothing behind; a
   * grant that won the race is kept), and it gives up its share of its process's place in the
   * queue. With local handoff or a {@code linger}, the lock objects of one client on one path share
   * one place; when the last of them closes, a place kept for later goes back at once (its node is
   * deleted in the background, and the call does not wait), and a place that is held then goes back
   * at its last release instead of lingering. Holds are not touched: they end as usual. A thread
   * that holds the lock may still acquire it again until it releases it. Closing is optional: the
   * client's close gives every place back, and a kept place nobody uses goes back when its linger
   * runs out. Idempotent.
   */
  @Override
  public void close() {
    holds.close();
  }

  @Override
  public String toString() {
    return "ReentrantMutex[" + path + "]";
  }
}

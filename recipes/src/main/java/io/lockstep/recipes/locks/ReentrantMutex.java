package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.owner.Handles;
import io.lockstep.recipes.internal.owner.Ownership;
import io.lockstep.recipes.internal.owner.Revocation;
import io.lockstep.recipes.internal.owner.ThreadOwnership;
import io.lockstep.recipes.internal.queue.Slot;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
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
public final class ReentrantMutex extends ThreadOwnedLock
    implements Revocable<ReentrantMutex>, AutoCloseable {
  private final Revocation revocation;

  /**
   * Creates a lock on {@code path} with Curator's mutex order. Nothing is sent to ZooKeeper until
   * the first acquire; missing parents are then created as container nodes.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param path the lock path
   * @throws NullPointerException if {@code client} or {@code path} is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path
   */
  public ReentrantMutex(CuratorFramework client, String path) {
    this(builder(client, path));
  }

  /**
   * Creates a lock on {@code path} ordered by {@code driver}.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param path the lock path
   * @param driver the queue order; every participant of the path must agree with it
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path, or the
   *     driver's lock name cannot be part of a node name
   */
  public ReentrantMutex(CuratorFramework client, String path, LockDriver driver) {
    this(builder(client, path).driver(driver));
  }

  private ReentrantMutex(Builder options) {
    this(options, options.slot(), new Revocation());
  }

  private ReentrantMutex(Builder options, Slot slot, Revocation revocation) {
    super(holds(options.attempts(slot), slot, revocation), options.queues(slot));
    this.revocation = options.handsOffLocally() ? null : revocation;
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
   * The options of a {@link ReentrantMutex}: its queue order and local handoff. Not thread-safe;
   * {@link #build()} checks them and makes the lock.
   */
  public static final class Builder extends MutexBuilder<Builder, ReentrantMutex> {
    private Builder(CuratorFramework client, String path) {
      super(client, path, "ReentrantMutex", ReentrantMutex::new);
    }
  }

  /** Each thread's holds, and the handles', in {@code slot}'s queue, revocable once asked to be. */
  private static Ownership holds(AttemptFactory attempts, Slot slot, Revocation revocation) {
    Queues queues = new Queues(slot, revocation);
    return new ThreadOwnership(
        attempts, queues, revocation, new Handles(attempts, queues, revocation));
  }

  /**
   * The queues a new acquisition enqueues in, for a thread's hold and a handle's alike: the lock's
   * slot, or, once revocable, a slot whose node carries empty data. One object, not a lambda each:
   * a lock object per key.
   */
  private static final class Queues implements Supplier<List<Slot>>, Function<Thread, List<Slot>> {
    private final Slot slot;
    private final Revocation revocation;

    Queues(Slot slot, Revocation revocation) {
      this.slot = slot;
      this.revocation = revocation;
    }

    @Override
    public List<Slot> get() {
      Slot queue = revocation.slotFor(slot);
      return queue.alone();
    }

    @Override
    public List<Slot> apply(Thread thread) {
      return get();
    }
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
}

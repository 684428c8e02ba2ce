package io.lockstep.recipes.locks;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import org.apache.curator.framework.CuratorFramework;

/**
 * A counting semaphore across processes, on ZooKeeper: at most {@code maxLeases} leases are held at
 * once. The replacement for Curator's {@code InterProcessSemaphoreV2}, on the same nodes, so that
 * Curator's and Lockstep's semaphores on one path share the leases during a rolling upgrade.
 *
 * <p><b>Held and owned.</b> Each lease is a {@link LockHold}, owned by whoever has the handle, not
 * by a thread: any thread may use and close it. A lease is held from the moment it is handed out
 * until {@link LockHold#close()}; it has its own state, fencing token and ownership checks, and is
 * reported {@link LockState#LOST} on its own if its node or session goes. Leases are not reentrant:
 * every acquire takes one more.
 *
 * <p><b>Order.</b> Lease nodes are {@code <path>/leases/_c_<uuid>-lease-<seq>}. A lease is granted
 * when fewer than {@code maxLeases} lease nodes have a smaller sequence number. A request first
 * tries without waiting (one create and one read, sent together); if no lease is free it queues for
 * the mutex {@code <path>/locks} (Curator's {@code InterProcessMutex} layout), and only the mutex
 * holder waits for a lease, as in Curator's protocol: waiters are served in the order they took the
 * mutex, and a request that finds a lease free takes it without queueing.
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.CountingSemaphore;
 * import io.lockstep.recipes.locks.LockHold;
 * import java.time.Duration;
 * import java.util.Optional;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * CuratorFramework client = ...; // a started client
 * FencedStore store = ...; // your store: refuses stale tokens (docs/getting-started.md)
 * CountingSemaphore exports = CountingSemaphore.builder(client, "/semaphores/exports", 4).build();
 * Optional<LockHold> lease = exports.tryHold(Duration.ofSeconds(5));
 * if (lease.isPresent()) {
 *   try (LockHold hold = lease.get()) {
 *     store.write("export-17", "running", hold.fencingToken()); // at most 4 at once, anywhere
 *   }
 * }
 * }</pre>
 *
 * <p><b>Forms.</b> {@code tryHold} is the name every recipe gives "try, and give me a hold": it
 * returns an {@link Optional} (or a list) that is empty when the budget ran out. The {@code
 * acquire} forms keep the shapes and meanings of Curator's {@code InterProcessSemaphoreV2},
 * including its {@code null} when a timed acquire runs out of budget. {@link #close()} ends the
 * object's use.
 *
 * <p><b>Failures.</b> A timed request that runs out of budget returns empty (an asynchronous one
 * fails with {@link java.util.concurrent.TimeoutException}); one that cannot reach ZooKeeper when
 * its budget runs out throws {@link LockUnreachableException}, within the budget plus 200 ms; an
 * interrupt throws {@link InterruptedException}; ZooKeeper failures throw {@link LockException}.
 * None of them leaves a lease node, a mutex node or a watch behind. A session that ends takes its
 * leases with it: their holds go {@link LockState#LOST}.
 *
 * <p><b>Limits.</b> A lease is not a JVM permit: a paused holder can outlive its session, and then
 * more than {@code maxLeases} processes may believe they hold one. Fence the writes that matter
 * (see {@link FencedLock}). Every participant of a path must use the same {@code maxLeases}.
 */
public final class CountingSemaphore extends CuratorSemaphoreForms implements AutoCloseable {
  private final String path;

  /**
   * Creates a semaphore on {@code path}. Nothing is sent to ZooKeeper until the first acquire.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param path the semaphore's path (Curator's {@code InterProcessSemaphoreV2} path)
   * @param maxLeases how many leases may be held at once, at least 1
   * @throws NullPointerException if {@code client} or {@code path} is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path, or
   *     {@code maxLeases} is below 1
   */
  public CountingSemaphore(CuratorFramework client, String path, int maxLeases) {
    this(builder(client, path, maxLeases));
  }

  private CountingSemaphore(Builder options) {
    super(options);
    this.path = options.path;
  }

  /**
   * Starts building a semaphore on {@code path} for {@code maxLeases} leases at once, the shape
   * every recipe shares. Nothing is sent to ZooKeeper until the first acquire.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param path the semaphore's path (Curator's {@code InterProcessSemaphoreV2} path)
   * @param maxLeases how many leases may be held at once, at least 1
   * @return a new builder
   * @throws NullPointerException if {@code client} or {@code path} is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path, or
   *     {@code maxLeases} is below 1
   */
  public static Builder builder(CuratorFramework client, String path, int maxLeases) {
    return new Builder(
        Arguments.client(client),
        Arguments.path(path, "path"),
        Arguments.atLeastOne(maxLeases, "maxLeases"));
  }

  /**
   * Makes a {@link CountingSemaphore}. It has no options yet beyond its path and {@code maxLeases};
   * it is there so that every recipe is built the same way.
   */
  public static final class Builder extends RecipeBuilder {
    final int maxLeases;

    private Builder(CuratorFramework client, String path, int maxLeases) {
      super(client, path);
      this.maxLeases = maxLeases;
    }

    /**
     * Makes the semaphore. Nothing is sent to ZooKeeper until the first acquire.
     *
     * @return a new semaphore object
     */
    public CountingSemaphore build() {
      return new CountingSemaphore(this);
    }
  }

  /**
   * Waits as long as it takes for a lease: the same as {@link #acquire()}, under the name the locks
   * give it.
   *
   * @return the lease; close it to give it back
   * @throws InterruptedException if interrupted first (nothing is left behind)
   * @throws IllegalStateException if the semaphore object was closed
   * @throws LockException if ZooKeeper failed beyond the client's retry policy, or the client
   *     closed
   */
  public LockHold hold() throws InterruptedException {
    return acquire();
  }

  /**
   * Waits at most {@code timeout} for a lease; a zero timeout takes a free lease without waiting.
   *
   * @param timeout the budget
   * @return the lease, or empty if none was free within the budget
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   * @throws InterruptedException if interrupted first (nothing is left behind)
   * @throws IllegalStateException if the semaphore object was closed
   * @throws LockUnreachableException if ZooKeeper could not be reached when the budget ran out
   * @throws LockException if ZooKeeper failed beyond the client's retry policy, or the client
   *     closed
   */
  public Optional<LockHold> tryHold(Duration timeout) throws InterruptedException {
    List<LockHold> got = leases.acquire(1, Arguments.timeoutNanos(timeout, "timeout"));
    return got.isEmpty() ? Optional.empty() : Optional.of(got.get(0));
  }

  /**
   * Waits at most {@code timeout} for a lease.
   *
   * @param timeout the budget
   * @return the lease, or empty if none was free within the budget
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   * @throws InterruptedException if interrupted first (nothing is left behind)
   * @deprecated the same as {@link #tryHold(Duration)}, the name every recipe uses
   */
  @Deprecated
  public Optional<LockHold> tryAcquire(Duration timeout) throws InterruptedException {
    return tryHold(timeout);
  }

  /**
   * Waits at most {@code timeout} for {@code qty} leases, all or none. If they are not all free at
   * once, the request gives back those it took, queues once for the mutex, and its holder takes all
   * {@code qty}: a request never holds leases while it queues, so two requests for several leases
   * never wait for each other's.
   *
   * @param qty how many leases, from 1 to {@code maxLeases}
   * @param timeout the budget
   * @return {@code qty} leases, or an empty list if the budget ran out (every lease granted by then
   *     was given back)
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code qty} is out of range or {@code timeout} negative
   * @throws InterruptedException if interrupted first (nothing is left behind)
   * @throws IllegalStateException if the semaphore object was closed
   * @throws LockUnreachableException if ZooKeeper could not be reached when the budget ran out
   * @throws LockException if ZooKeeper failed beyond the client's retry policy, or the client
   *     closed
   */
  public List<LockHold> tryHold(int qty, Duration timeout) throws InterruptedException {
    return leases.acquire(checkQty(qty), Arguments.timeoutNanos(timeout, "timeout"));
  }

  /**
   * Asks for a lease without waiting for it, with no budget: the stage completes when a lease is
   * granted (or the request fails). See {@link #acquireAsync(Duration, Executor)}.
   *
   * @return completes with the lease
   */
  public CompletionStage<LockHold> acquireAsync() {
    return leases.acquireAsync(-1, leases::execute);
  }

  /**
   * Asks for a lease without waiting for it: no thread is parked while it waits. The stage
   * completes on Lockstep's scheduler threads, never on ZooKeeper's event thread.
   *
   * @param timeout the budget
   * @return completes with the lease; fails with {@link java.util.concurrent.TimeoutException} when
   *     the budget runs out, {@link LockUnreachableException} or {@link LockException}. Cancelling
   *     it withdraws the request and leaves nothing behind (a lease granted meanwhile is returned);
   *     once it has completed, a cancel does nothing and the lease is the caller's to close.
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   */
  public CompletionStage<LockHold> acquireAsync(Duration timeout) {
    return leases.acquireAsync(Arguments.timeoutNanos(timeout, "timeout"), leases::execute);
  }

  /**
   * As {@link #acquireAsync(Duration)}, with the stage completed on {@code executor} (if it refuses
   * the task, the stage fails with its {@link java.util.concurrent.RejectedExecutionException} and
   * a lease granted meanwhile is given back).
   *
   * @param timeout the budget
   * @param executor completes the stage, so runs its dependent stages
   * @return completes with the lease, as {@link #acquireAsync(Duration)}
   * @throws NullPointerException if {@code timeout} or {@code executor} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   */
  public CompletionStage<LockHold> acquireAsync(Duration timeout, Executor executor) {
    long nanos = Arguments.timeoutNanos(timeout, "timeout");
    return leases.acquireAsync(nanos, Objects.requireNonNull(executor, "executor"));
  }

  /**
   * Asks for {@code qty} leases at once without waiting for them: all or none, as {@link
   * #tryHold(int, Duration)}, and no thread is parked while the request waits. The stage completes
   * on Lockstep's scheduler threads, never on ZooKeeper's event thread.
   *
   * @param qty how many leases, from 1 to {@code maxLeases}
   * @param timeout the budget
   * @return completes with the {@code qty} leases; fails with {@link
   *     java.util.concurrent.TimeoutException} when the budget runs out (every lease granted by
   *     then is given back), {@link LockUnreachableException} or {@link LockException}. Cancelling
   *     it withdraws the request and leaves nothing behind (leases granted meanwhile are given
   *     back); once it has completed, a cancel does nothing and the leases are the caller's to
   *     close.
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code qty} is out of range or {@code timeout} negative
   * @throws IllegalStateException if the semaphore object was closed
   */
  public CompletionStage<List<LockHold>> acquireAsync(int qty, Duration timeout) {
    long nanos = Arguments.timeoutNanos(timeout, "timeout");
    return leases.acquireAsync(checkQty(qty), nanos, leases::execute);
  }

  /**
   * As {@link #acquireAsync(int, Duration)}, with the stage completed on {@code executor} (if it
   * refuses the task, the stage fails with its {@link
   * java.util.concurrent.RejectedExecutionException} and the leases granted meanwhile are given
   * back).
   *
   * @param qty how many leases, from 1 to {@code maxLeases}
   * @param timeout the budget
   * @param executor completes the stage, so runs its dependent stages
   * @return completes with the leases, as {@link #acquireAsync(int, Duration)}
   * @throws NullPointerException if {@code timeout} or {@code executor} is null
   * @throws IllegalArgumentException if {@code qty} is out of range or {@code timeout} negative
   * @throws IllegalStateException if the semaphore object was closed
   */
  public CompletionStage<List<LockHold>> acquireAsync(
      int qty, Duration timeout, Executor executor) {
    long nanos = Arguments.timeoutNanos(timeout, "timeout");
    return leases.acquireAsync(checkQty(qty), nanos, Objects.requireNonNull(executor, "executor"));
  }

  /**
   * Closes this semaphore object: it starts no new request from now on (every acquire form throws
   * {@link IllegalStateException}, an asynchronous one fails with it), and the requests still
   * waiting are withdrawn, leaving nothing behind (their callers get the same exception; a lease
   * granted in the race is given back). Leases already handed out are not touched: they stay held
   * until their holders close them. Idempotent.
   */
  @Override
  public void close() {
    leases.close();
  }

  /**
   * The leases free now, read from the server: {@code maxLeases} less the lease nodes (held, or
   * waiting for a moment), never below 0. One request.
   *
   * @return the free leases
   * @throws LockException if ZooKeeper could not be read
   */
  public int availablePermits() {
    return leases.availablePermits();
  }

  /**
   * How many leases may be held at once.
   *
   * @return {@code maxLeases}
   */
  public int maxLeases() {
    return maxLeases;
  }

  /**
   * The semaphore's path.
   *
   * @return the path given at construction
   */
  public String path() {
    return path;
  }

  @Override
  public String toString() {
    return "CountingSemaphore[" + path + ", " + maxLeases + "]";
  }
}

package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.owner.Leases;
import io.lockstep.recipes.internal.owner.ObjectOwnership;
import io.lockstep.recipes.internal.queue.LeaseDriver;
import io.lockstep.recipes.internal.queue.Slot;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;

/**
 * A non-reentrant mutual-exclusion lock across processes on the nodes of Curator's {@code
 * InterProcessSemaphoreMutex}, so that old and new instances on one path exclude each other during
 * a rolling upgrade: the drop-in for that class, with fencing tokens, loss notification and
 * ownership checks.
 *
 * <p><b>Held and owned.</b> A hold is owned by this lock object, not by a thread: any thread may
 * release it. The object holds at most one hold at a time. An untimed acquire by the thread that
 * already holds it fails fast with {@link IllegalMonitorStateException} instead of waiting for
 * itself forever; a timed one waits and returns false unless another thread releases in time. Other
 * threads of this process wait for the object first, then for the lock. The holds of {@link
 * #hold()}, {@link #tryHold} and {@link #acquireAsync()} are the handles', apart from the object's.
 *
 * <p><b>Order.</b> Curator's semaphore protocol with one lease: the holder's node is {@code
 * <path>/leases/_c_<uuid>-lease-<seq>}, and waiters queue first in the mutex {@code <path>/locks}
 * (Curator's {@code InterProcessMutex} layout), so they are served in the order they took it. An
 * acquire first tries without waiting (its lease node and a read, sent together); a free lock costs
 * 3 requests per cycle, where Curator's class sends 7. It excludes {@code
 * InterProcessSemaphoreMutex}, {@code InterProcessSemaphoreV2} with one lease, a {@link
 * CountingSemaphore} of one lease and other {@code SemaphoreMutex} objects on the same path; it
 * does <em>not</em> exclude the mutexes of Curator's {@code InterProcessMutex} layout ({@link
 * NonReentrantMutex}, {@link ReentrantMutex}).
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.SemaphoreMutex;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * CuratorFramework client = ...; // a started client
 * FencedStore store = ...; // your store: refuses stale tokens (docs/getting-started.md)
 * SemaphoreMutex lock = new SemaphoreMutex(client, "/locks/nightly-batch");
 * lock.acquire();
 * try {
 *   store.write("batch", "done", lock.fencingToken()); // any thread may release
 * } finally {
 *   lock.release();
 * }
 * }</pre>
 *
 * <p><b>Failures.</b> A timeout returns false; one that cannot reach ZooKeeper when its budget runs
 * out throws {@link LockUnreachableException}; an interrupt throws {@link InterruptedException};
 * ZooKeeper failures throw {@link LockException}; none of them leaves a lease node, a mutex node or
 * a watch behind. A session that ends takes the lease with it: the state listeners hear {@link
 * LockState#LOST} and {@link #checkHeld()} throws. Releasing a lock that is not held throws {@link
 * IllegalMonitorStateException} (Curator's class: {@link IllegalStateException}).
 *
 * <p><b>Limits.</b> See {@link FencedLock}: a paused holder can outlive its session; fence the
 * writes that matter. Every participant of the path must use one lease.
 */
public final class SemaphoreMutex extends ObjectOwnedLock {
  /**
   * Creates a lock on {@code path}, Curator's {@code InterProcessSemaphoreMutex} path. Nothing is
   * sent to ZooKeeper until the first acquire.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param path the lock path
   * @throws NullPointerException if {@code client} or {@code path} is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path
   */
  public SemaphoreMutex(CuratorFramework client, String path) {
    this(builder(client, path));
  }

  private SemaphoreMutex(Builder options) {
    super(
        new ObjectOwnership(new Leases(options.client, options.path, 1, "SemaphoreMutex")),
        QueueView.of("SemaphoreMutex", List.of(leaseSlot(options.path))));
  }

  private static Slot leaseSlot(String path) {
    return Slot.of(ZKPaths.makePath(path, LeaseDriver.LEASES), new LeaseDriver(1), null);
  }

  /**
   * Starts building a lock on {@code path}, the shape every recipe shares. Nothing is sent to
   * ZooKeeper until the first acquire.
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
   * Makes a {@link SemaphoreMutex}. It has no options beyond its path: the layout is Curator's; it
   * is there so that every recipe is built the same way.
   */
  public static final class Builder extends RecipeBuilder {
    private Builder(CuratorFramework client, String path) {
      super(client, path);
    }

    /**
     * Makes the lock. Nothing is sent to ZooKeeper until the first acquire.
     *
     * @return a new lock object
     */
    public SemaphoreMutex build() {
      return new SemaphoreMutex(this);
    }
  }

  /**
   * Closes this lock object: it starts no new hold from now on ({@code acquire}, {@code hold},
   * {@code acquireAsync} and the {@link #asLock() Lock} view's methods throw {@link
   * IllegalStateException}), and its acquires under way are withdrawn (they throw {@link
   * IllegalStateException}, an asynchronous one fails with it, and they leave nothing behind; a
   * grant that won the race is kept). Holds are not touched: they end as usual. Idempotent.
   */
  @Override
  public void close() {
    holds.close();
  }
}

package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.owner.ObjectOwnership;
import io.lockstep.recipes.internal.queue.Slot;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;

/**
 * A non-reentrant mutual-exclusion lock across processes, on ZooKeeper: the replacement for
 * Curator's {@code InterProcessSemaphoreMutex}, at 3 requests per cycle instead of 7.
 *
 * <p><b>Held and owned.</b> A hold is owned by this lock object, not by a thread: any thread may
 * release it, which suits work handed between threads. The object holds at most one hold at a time.
 * An untimed acquire by the thread that already holds it fails fast with {@link
 * IllegalMonitorStateException} instead of waiting for itself forever; a timed one waits and
 * returns false unless another thread releases in time. Other threads of this process wait for the
 * object first, then for the lock.
 *
 * <p><b>Order.</b> Fair, first come first served, in the same queue and node layout as Curator's
 * {@code InterProcessMutex} ({@code <path>/_c_<uuid>-lock-<seq>}): it excludes {@code
 * InterProcessMutex}, {@link ReentrantMutex} and other {@code NonReentrantMutex} objects on the
 * same path. It does <em>not</em> exclude Curator's {@code InterProcessSemaphoreMutex}, which keeps
 * its nodes under {@code <path>/locks} and {@code <path>/leases}: migrate all participants of a
 * path together.
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.NonReentrantMutex;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * CuratorFramework client = ...; // a started client
 * FencedStore store = ...; // your store: refuses stale tokens (docs/getting-started.md)
 * NonReentrantMutex lock = new NonReentrantMutex(client, "/locks/batch");
 * lock.acquire();
 * try {
 *   store.write("batch", "done", lock.fencingToken()); // work may move on; any thread may release
 * } finally {
 *   lock.release();
 * }
 * }</pre>
 *
 * <p><b>Failures.</b> As for {@link ReentrantMutex}: a timeout returns false, an interrupt throws
 * {@link InterruptedException}, ZooKeeper failures throw {@link LockException}, none of them leaves
 * a node or watch behind; loss while held is reported to the state listeners and by {@link
 * #checkHeld()}. Releasing a lock that is not held throws {@link IllegalMonitorStateException}.
 *
 * <p><b>Limits.</b> See {@link FencedLock}: a paused holder can outlive its session; fence the
 * writes that matter.
 */
public final class NonReentrantMutex extends ObjectOwnedLock {
  /**
   * Creates a lock on {@code path} with Curator's mutex order. Nothing is sent to ZooKeeper until
   * the first acquire.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param path the lock path
   * @throws NullPointerException if {@code client} or {@code path} is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path
   */
  public NonReentrantMutex(CuratorFramework client, String path) {
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
  public NonReentrantMutex(CuratorFramework client, String path, LockDriver driver) {
    this(builder(client, path).driver(driver));
  }

  private NonReentrantMutex(Builder options) {
    this(options, options.slot());
  }

  private NonReentrantMutex(Builder options, Slot slot) {
    super(ObjectOwnership.ofQueues(options.attempts(slot), List.of(slot)), options.queues(slot));
  }

  /**
   * Starts a lock on {@code path} with options beyond the constructors':
   *
   * <pre>{@code
   * import io.lockstep.recipes.locks.NonReentrantMutex;
   * import org.apache.curator.framework.CuratorFramework;
   *
   * CuratorFramework client = ...; // a started client
   * NonReentrantMutex lock = NonReentrantMutex.builder(client, "/locks/batch").localHandoff().build();
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
   * The options of a {@link NonReentrantMutex}: its queue order and local handoff. Not thread-safe;
   * {@link #build()} checks them and makes the lock.
   */
  public static final class Builder extends MutexBuilder<Builder, NonReentrantMutex> {
    private Builder(CuratorFramework client, String path) {
      super(client, path, "NonReentrantMutex", NonReentrantMutex::new);
    }
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
   * at its last release instead of lingering. Holds are not touched: they end as usual. Closing is
   * optional: the client's close gives every place back, and a kept place nobody uses goes back
   * when its linger runs out. Idempotent.
   */
  @Override
  public void close() {
    holds.close();
  }
}

package io.lockstep.recipes.locks;

import java.util.List;
import java.util.concurrent.CompletionStage;
import org.apache.curator.framework.api.transaction.CuratorOp;

/**
 * One hold of one lock, owned by this handle rather than by a thread: the result of {@link
 * FencedLock#acquireAsync()}, {@link FencedLock#hold()} and {@link FencedLock#tryHold}.
 *
 * <p><b>Held and owned.</b> The lock is held from the moment the handle is handed out until {@link
 * #close()}. Any thread may use and close the handle, so a hold can follow work across executors,
 * futures and virtual threads. Each handle is its own entry in the lock's queue: it is not
 * reentrant, and it is not shared with the thread-bound {@code acquire()} of the same lock object
 * (a thread that holds the lock through {@code acquire()} and asks for a handle waits behind its
 * own hold).
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.FencedLock;
 * import io.lockstep.recipes.locks.LockHold;
 *
 * FencedLock lock = ...; // any of Lockstep's locks
 * FencedStore store = ...; // your store: refuses stale tokens (docs/getting-started.md)
 * try (LockHold hold = lock.hold()) {
 *   store.write("order-17", "paid", hold.fencingToken());
 * }
 * }</pre>
 *
 * <p><b>Failures.</b> While held, the hold's {@link #state()} follows the session: {@link
 * LockState#AT_RISK} while the connection is suspended, {@link LockState#LOST} once the session or
 * the node is gone or the client is closed. After a loss {@link #checkHeld()}, {@link
 * #fencingToken()} and {@link #ownershipChecks()} throw {@link LockOwnershipLostException}, and
 * {@link #close()} clears the hold without throwing; {@link #whenLost()} tells of the loss as it
 * happens, to stop work that runs elsewhere. See {@link FencedLock} on why a distributed lock is
 * not a JVM mutex, and on fencing.
 */
public interface LockHold extends AutoCloseable {
  /**
   * The lock's path (for a multi-lock, its paths in brackets).
   *
   * @return the path
   */
  String path();

  /**
   * The fencing token of this hold: greater than every token handed out for the lock before this
   * hold was granted (see {@link FencedLock#fencingToken()}). Costs no request, except for a lock
   * that hands off locally (see {@link LocalHandoff}).
   *
   * @return the fencing token
   * @throws LockOwnershipLostException if the hold was lost
   * @throws LockException if the hold hands off locally and the write of its fence was not answered
   *     within the client's connection timeout (see {@link LocalHandoff})
   * @throws IllegalStateException if the hold was closed
   */
  long fencingToken();

  /**
   * Where the hold stands: {@link LockState#HELD}, {@link LockState#AT_RISK}, {@link
   * LockState#LOST}, or {@link LockState#RELEASED} once closed.
   *
   * @return the hold's state
   */
  LockState state();

  /**
   * Checks that the hold still holds, as far as this client knows. Costs no request. While the
   * connection is suspended ({@link LockState#AT_RISK}) the check passes; only a fenced write is
   * certain.
   *
   * @throws LockOwnershipLostException if the hold was lost
   * @throws IllegalStateException if the hold was closed
   */
  void checkHeld();

  /**
   * Check operations on this hold's lock nodes, for the caller's own ZooKeeper transaction: it
   * commits only while the nodes, and so the lock, exist.
   *
   * @return one check per lock node
   * @throws LockOwnershipLostException if the hold was lost
   * @throws LockException if the hold hands off locally and the write of its fence was not answered
   *     within the client's connection timeout (see {@link LocalHandoff})
   * @throws IllegalStateException if the hold was closed
   */
  List<CuratorOp> ownershipChecks();

  /**
   * A stage that completes when this hold is lost: normally, with the {@link
   * LockOwnershipLostException} that {@link #checkHeld()} throws from then on, once the hold turns
   * {@link LockState#LOST} (session expired, node deleted, client closed, time to live ran out). It
   * never completes normally for a hold that is closed without having been lost: {@link #close()}
   * completes it exceptionally with a {@link java.util.concurrent.CancellationException}, so the
   * stages that depend on it ({@code thenRun}, {@code thenAccept}) are dropped, and nothing
   * registered on it outlives the hold.
   *
   * <p>The stage is completed on one of Lockstep's threads, after the lock's state listeners heard
   * LOST, never on ZooKeeper's event thread; dependent stages added before then run there (keep
   * them short, or use the {@code ...Async} forms), those added later run in the adding thread.
   * Each call returns a new stage: completing or cancelling it affects neither the hold nor the
   * stages other callers got. The usual idiom stops the work that the hold protects:
   *
   * <pre>{@code
   * import io.lockstep.recipes.locks.LockHold;
   * import java.util.concurrent.ExecutorService;
   * import java.util.concurrent.Future;
   *
   * LockHold hold = ...; // a hold of any of Lockstep's locks
   * ExecutorService executor = ...; // the service's executor
   * Runnable task = ...; // the work the hold protects
   * Future<?> work = executor.submit(task);
   * hold.whenLost().thenRun(() -> work.cancel(true));
   * }</pre>
   *
   * @return a stage completed with the loss, or exceptionally once the hold is closed unlost
   */
  CompletionStage<LockOwnershipLostException> whenLost();

  /**
   * Releases the hold: deletes its lock node before returning while the client is connected (at
   * most its connection timeout); if ZooKeeper is unreachable it returns at once and the deletion
   * goes on in the background until it succeeds. Closing again does nothing; closing a lost hold
   * clears it, logs a warning and does not throw.
   */
  @Override
  void close();
}

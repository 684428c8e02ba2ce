package io.lockstep.recipes.locks;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.listen.Listenable;
import org.apache.curator.framework.recipes.locks.InterProcessLock;

/**
 * A ZooKeeper lock that tells its holder when it is lost and hands out fencing tokens: the common
 * type of Lockstep's recipes.
 *
 * <p><b>Held and owned.</b> A lock is held between a successful acquire and {@code release()}. Who
 * owns a hold depends on the recipe: a thread for the reentrant recipes, the lock object for {@link
 * NonReentrantMutex}. The methods below answer for the caller's hold and throw {@link
 * IllegalMonitorStateException} when the caller holds nothing.
 *
 * <p><b>Usage.</b>
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.FencedLock;
 *
 * FencedLock lock = ...; // any of Lockstep's locks
 * lock.acquire();
 * try {
 *   // guarded work; write with lock.fencingToken() or lock.ownershipChecks()
 * } finally {
 *   lock.release();
 * }
 * }</pre>
 *
 * <p><b>Failures.</b> ZooKeeper failures surface as {@link LockException}; a timed acquire that
 * runs out of time returns false, or throws {@link LockUnreachableException} if ZooKeeper could not
 * be reached, within its budget plus a 200 ms grace whatever the connection state; an interrupted
 * acquire throws {@link InterruptedException}. In each case the attempt's node is deleted and its
 * watches are removed before the call returns if ZooKeeper confirms it within that grace (otherwise
 * the deletion goes on in the background until it succeeds): no grant is ever left that the caller
 * does not know about. Closing the Curator client is terminal: waiting acquires fail at once with
 * {@link LockException} and holds become {@link LockState#LOST}.
 *
 * <p><b>A distributed lock is not a JVM mutex.</b> A holder can be paused (a long GC, a stalled
 * disk) for longer than its session timeout. Its session expires, ZooKeeper deletes its node, the
 * next waiter is granted the lock, and the paused holder resumes believing it still holds it:
 *
 * <pre>
 *   holder A: acquire (token 17) ... paused ........................ resumes, writes with 17
 *   ZooKeeper:                        A's session expires, node deleted
 *   holder B:                                      acquire (token 23), writes with 23
 *   resource:                                                  accepts 23 ... refuses 17 (17 &lt; 23)
 * </pre>
 *
 * <p>Loss notification ({@link #getStateListenable()}, {@link #checkHeld()}) shortens that window
 * but cannot close it. To close it, make the guarded resource refuse stale holders: pass {@link
 * #fencingToken()} with each write and have the resource reject tokens lower than one it has seen,
 * or, when the resource is in ZooKeeper, put {@link #ownershipChecks()} in the same transaction as
 * the write, so the write commits only while the lock node exists.
 *
 * <p><b>Limits.</b> Do not acquire from a ZooKeeper or Curator callback thread (a watcher, a
 * listener): waiting there blocks the very events the lock waits for. A lock object is cheap; share
 * a Curator client, not necessarily lock objects.
 */
public interface FencedLock extends InterProcessLock {
  /**
   * Acquires the lock, waiting as long as it takes.
   *
   * @throws InterruptedException if the calling thread is interrupted while waiting; the attempt is
   *     then withdrawn
   * @throws LockException if ZooKeeper fails beyond the client's retry policy
   */
  @Override
  void acquire() throws InterruptedException;

  /**
   * Acquires the lock if it is granted within the given total time. The budget covers every step
   * (creating the node, reading the queue, waiting). A zero budget still makes one attempt (create
   * and one read of the queue), whose answer is awaited for at most a 200 ms grace. The call
   * returns within the budget plus that grace whatever the connection state and retry policy: what
   * is still in flight then (a create, a delete) is finished in the background.
   *
   * @param time the longest time to wait, not negative
   * @param unit the unit of {@code time}
   * @return true if the lock was acquired, false if the time ran out (nothing is then left behind)
   * @throws InterruptedException if the calling thread is interrupted while waiting
   * @throws IllegalArgumentException if {@code time} is negative
   * @throws NullPointerException if {@code unit} is null
   * @throws LockUnreachableException if the budget ran out because ZooKeeper could not be reached
   *     (no connection, or no answer to the first try), or the retry policy gave up on a lost
   *     connection: unreachable, not busy
   * @throws LockException if ZooKeeper fails otherwise beyond the client's retry policy
   */
  @Override
  boolean acquire(long time, TimeUnit unit) throws InterruptedException;

  /**
   * Acquires the lock if it is granted within {@code timeout}: {@link #acquire(long, TimeUnit)}
   * with the time in nanoseconds, and everything it says, for each recipe too. A timeout too long
   * to count in nanoseconds (some 292 years) is as good as forever and waits that long.
   *
   * @param timeout the longest time to wait, not negative; zero makes one attempt
   * @return true if the lock was acquired, false if the time ran out (nothing is then left behind)
   * @throws InterruptedException if the calling thread is interrupted while waiting
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   * @throws LockUnreachableException if ZooKeeper could not be reached, as for {@link
   *     #acquire(long, TimeUnit)}
   * @throws LockException if ZooKeeper fails otherwise beyond the client's retry policy
   */
  default boolean acquire(Duration timeout) throws InterruptedException {
    return acquire(Arguments.timeoutNanos(timeout, "timeout"), TimeUnit.NANOSECONDS);
  }

  /**
   * Releases the caller's hold. The last release of a hold deletes its lock node, waiting for the
   * delete while the client is connected (at most its connection timeout); if ZooKeeper is
   * unreachable it returns at once and the deletion is retried in the background until it succeeds.
   * Releasing a hold that was {@link LockState#LOST lost} clears local state, logs a warning and
   * does not throw.
   *
   * @throws IllegalMonitorStateException if the caller does not hold the lock
   */
  @Override
  void release();

  /**
   * The fencing token of the caller's hold: a zxid greater than every token handed out for this
   * lock before this hold was granted, to any holder, in any process. It is the zxid at which the
   * grant was decided: the one that created the hold's lock node, or, if later, the one of the
   * queue change that let it hold (the deletion of the node it waited for). So tokens strictly
   * increase across successive holders of one lock, whatever mix of recipes, local handoff and
   * Curator's locks share it, also after its directory is deleted and recreated; they do not change
   * across reentrant acquisitions. Reading it costs no request, except for a lock that hands off
   * locally (see {@link LocalHandoff}).
   *
   * @return the fencing token
   * @throws IllegalMonitorStateException if the caller does not hold the lock
   * @throws LockOwnershipLostException if the hold was lost
   * @throws LockException if the hold hands off locally and the write of its fence was not answered
   *     within the client's connection timeout (see {@link LocalHandoff})
   */
  long fencingToken();

  /**
   * Checks that the caller still holds the lock, as far as this client knows. Costs no request.
   * While the connection is suspended ({@link LockState#AT_RISK}) this check passes; only a fenced
   * write is certain.
   *
   * @throws IllegalMonitorStateException if the caller does not hold the lock
   * @throws LockOwnershipLostException if the hold was lost
   */
  void checkHeld();

  /**
   * Check operations on the caller's lock nodes, to put in the caller's own ZooKeeper transaction
   * so that it commits only while the lock is held:
   *
   * <pre>{@code
   * import io.lockstep.recipes.locks.FencedLock;
   * import java.util.ArrayList;
   * import java.util.List;
   * import org.apache.curator.framework.CuratorFramework;
   * import org.apache.curator.framework.api.transaction.CuratorOp;
   *
   * CuratorFramework client = ...; // the lock's client
   * FencedLock lock = ...; // held by the caller
   * byte[] balance = ...; // the new data
   * List<CuratorOp> ops = new ArrayList<>(lock.ownershipChecks());
   * ops.add(client.transactionOp().setData().forPath("/accounts/7", balance));
   * client.transaction().forOperations(ops);
   * }</pre>
   *
   * @return one check per lock node of the caller's hold
   * @throws IllegalMonitorStateException if the caller does not hold the lock
   * @throws LockOwnershipLostException if the hold was lost
   * @throws LockException if the hold hands off locally and the write of its fence was not answered
   *     within the client's connection timeout (see {@link LocalHandoff})
   */
  List<CuratorOp> ownershipChecks();

  /**
   * The listeners to this lock's state changes: held, at risk, lost, released.
   *
   * @return the container to add listeners to and remove them from
   */
  Listenable<LockStateListener> getStateListenable();

  /**
   * Starts acquiring the lock as a {@link LockHold} and returns at once; no thread waits meanwhile.
   * The stage completes when the lock is held, on Lockstep's own daemon threads (never ZooKeeper's
   * event thread), which then run the dependent stages that are not {@code ...Async}; use {@link
   * #acquireAsync(Duration, Executor)} to choose the executor.
   *
   * <p>The hold is a separate entry in the lock's queue, owned by the handle, not by a thread: it
   * is not reentrant, and not shared with {@link #acquire()} (a thread holding the lock through
   * {@code acquire()} that asks for a hold waits behind itself). Cancelling the stage ({@code
   * toCompletableFuture().cancel(true)}) withdraws the attempt: nothing is left on the server, and
   * a hold granted while the cancel runs is released. A cancel after the stage completed does
   * nothing ({@code cancel} returns false): the hold is then the caller's to close. The stage fails
   * with {@link LockException} if ZooKeeper fails beyond the client's retry policy or the client is
   * closed.
   *
   * @return a stage completed with the hold
   */
  CompletionStage<LockHold> acquireAsync();

  /**
   * As {@link #acquireAsync()}, within a total budget: when it runs out, the attempt is withdrawn
   * (its node deleted) and the stage fails with a {@link java.util.concurrent.TimeoutException}, or
   * with a {@link LockUnreachableException} if ZooKeeper could not be reached; either within the
   * budget plus a 200 ms grace, whatever the retry policy. A zero budget still makes one attempt.
   *
   * @param timeout the longest time to wait, not negative
   * @return a stage completed with the hold
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   */
  CompletionStage<LockHold> acquireAsync(Duration timeout);

  /**
   * As {@link #acquireAsync(Duration)}, completing the stage on {@code executor}, which so runs its
   * dependent stages. A slow stage delays nothing but that executor.
   *
   * @param timeout the longest time to wait, not negative
   * @param executor completes the stage
   * @return a stage completed with the hold
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   */
  CompletionStage<LockHold> acquireAsync(Duration timeout, Executor executor);

  /**
   * Acquires the lock as a {@link LockHold}, waiting as long as it takes: the blocking form for
   * try-with-resources. The hold is a separate entry in the queue, as for {@link #acquireAsync()}.
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
   * @return the hold
   * @throws InterruptedException if interrupted while waiting; the attempt is then withdrawn
   * @throws LockException if ZooKeeper fails beyond the client's retry policy
   */
  LockHold hold() throws InterruptedException;

  /**
   * Acquires the lock as a {@link LockHold} if it is granted within the total budget.
   *
   * @param timeout the longest time to wait, not negative; zero makes one attempt
   * @return the hold, or empty if the budget ran out (nothing is then left behind)
   * @throws InterruptedException if interrupted while waiting; the attempt is then withdrawn
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   * @throws LockUnreachableException if ZooKeeper could not be reached (as for {@link
   *     #acquire(long, TimeUnit)}); returned within the budget plus a 200 ms grace
   * @throws LockException if ZooKeeper fails otherwise beyond the client's retry policy
   */
  Optional<LockHold> tryHold(Duration timeout) throws InterruptedException;

  /**
   * This lock as a {@link java.util.concurrent.locks.Lock}, with its contract: see {@link
   * LockView}. Holds taken through the view are this lock's own ({@link #acquire()}'s).
   *
   * @return the view
   */
  LockView asLock();

  /**
   * The nodes of this lock's queue in queue order, holders first, as full paths. Reads ZooKeeper.
   *
   * @return the participant nodes; empty if the lock path does not exist
   * @throws LockException if ZooKeeper fails beyond the client's retry policy
   */
  Collection<String> getParticipantNodes();
}

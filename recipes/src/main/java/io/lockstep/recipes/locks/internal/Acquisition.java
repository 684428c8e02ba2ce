package io.lockstep.recipes.locks.internal;

import io.lockstep.recipes.locks.LockDecision;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt to take a lock, and the hold it turns into: our node in each queue, created, waited
 * on, held, and deleted. This is the engine every recipe runs on; the recipes only decide which
 * queues to enqueue in and who owns the result.
 *
 * <p>The acquisition is asynchronous: ZooKeeper callbacks and watch events drive it, and {@link
 * #granted()} completes when the lock is held. No thread waits inside the engine; the blocking
 * {@link #await(long)} of the recipes waits on that future (which parks, never on a monitor).
 */
public final class Acquisition {
  /*
   * Algorithm notes.
   *
   * Invariants:
   * - `phase` goes ENQUEUING/WAITING -> HELD -> (AT_RISK <-> HELD) -> LOST -> RELEASED, or
   *   ENQUEUING/WAITING -> CANCELLED | FAILED; a waiter whose nodes were lost goes back to
   *   ENQUEUING in a new epoch. Nothing returns to waiting once granted. Exactly one of grant() and
   *   withdraw() wins, decided under stateLock, so a grant the caller does not know about cannot
   *   happen.
   * - `epoch` changes whenever our nodes are lost while waiting and we enqueue again; every callback
   *   carries the epoch it was issued in and is ignored when it is stale. A stale create that
   *   succeeded deletes what it created.
   * - Every node we create is deleted by release(), cancel(), fail() or a stale create callback,
   *   with Curator's guaranteed delete.
   * - A predecessor watch is counted in WatchRegistry from arming until it fires or is withdrawn;
   *   the last waiter of a session to withdraw removes it from the server.
   *
   * Repeatedly:
   *   create our node(s) (one create, or one multi for several queues); the create's stat gives the
   *     fencing token. On connection loss: find our node by its protection id and accept it only if
   *     its ephemeralOwner is our current session.
   *   read the children (one getChildren, leaving a child watch; or one read-only multi).
   *   ask each queue's driver: hold, or watch node X.
   *   all hold -> HELD. Else getData(X, watcher); when it fires, read again - or, if X was the
   *     head of an append-only queue and was deleted, confirm our node with getData and hold.
   *
   * Holding (one queue): the child watch left by the last read fires at the next change of the
   * queue; we then watch our own node with getData, so its deletion is noticed at the cost of one
   * request only under contention. Uncontended, a cycle is create + getChildren + delete, and our
   * own delete consumes the child watch: nothing is left behind. Connection SUSPENDED -> AT_RISK;
   * RECONNECTED -> check our node is still there and still ours -> HELD, else LOST; LOST -> LOST.
   *
   * References: ZooKeeper recipes, "Locks"; Curator's LockInternals; DESIGN.md sections 2-6.
   */

  private static final Logger log = LoggerFactory.getLogger(Acquisition.class);

  /** Curator's revocation request, written by {@code Revoker.attemptRevoke} into a lock node. */
  private static final byte[] REVOKE_MESSAGE = "__REVOKE__".getBytes(StandardCharsets.UTF_8);

  /** How many times in a row the engine creates missing parents before it gives up. */
  private static final int MAX_PARENT_CREATIONS = 5;

  private enum Phase {
    ENQUEUING,
    WAITING,
    HELD,
    AT_RISK,
    LOST,
    RELEASED,
    CANCELLED,
    FAILED;

    boolean isWaiting() {
      return this == ENQUEUING || this == WAITING;
    }

    boolean isHolding() {
      return this == HELD || this == AT_RISK;
    }
  }

  /** What one reading of the queues means for us. */
  private record Verdict(boolean nodesMissing, String watchPath, boolean watchHead) {
    static final Verdict HOLD = new Verdict(false, null, false);
    static final Verdict MISSING = new Verdict(true, null, false);

    boolean holds() {
      return !nodesMissing && watchPath == null;
    }
  }

  private final LockContext context;
  private final ZkAsync zk;
  private final List<Slot> slots;
  private final Runnable revocationHandler;
  private final long startNanos = System.nanoTime();
  private final CompletableFuture<Void> granted = new CompletableFuture<>();
  private final CompletableFuture<Void> attempted = new CompletableFuture<>();
  private final ReentrantLock stateLock = new ReentrantLock();
  private final ConnectionStateListener connectionListener = (c, state) -> onConnection(state);
  private final Watcher queueWatcher = this::onQueueEvent;
  private final Watcher ownNodeWatcher = this::onOwnNodeEvent;

  private Phase phase = Phase.ENQUEUING; // guarded by stateLock
  private int epoch; // guarded by stateLock: bumped each time we enqueue anew
  private String protectionId = NodeNames.newProtectionId(); // guarded by stateLock
  private List<String> nodes = List.of(); // guarded by stateLock: our node per slot, once created
  private long sessionId; // guarded by stateLock: the session that owns `nodes`
  private long fencingToken; // guarded by stateLock: czxid of our nodes
  private int createFailures; // guarded by stateLock: failed creates of the current epoch
  private int parentCreations; // guarded by stateLock: parents created in a row
  private int requeues; // guarded by stateLock: times our nodes were lost while waiting
  private PredecessorWatch watch; // guarded by stateLock: the node we wait on, if any
  private boolean watchIsHead; // guarded by stateLock: `watch` was the head of an append-only queue
  private boolean ownNodeWatched; // guarded by stateLock: a data watch on our (first) node is armed
  private String lostReason; // guarded by stateLock: why the hold was lost

  private Acquisition(LockContext context, List<Slot> slots, Runnable revocationHandler) {
    this.context = context;
    this.zk = context.zk();
    this.slots = List.copyOf(slots);
    this.revocationHandler = revocationHandler;
  }

  /**
   * Starts enqueuing in the given queues.
   *
   * @param revocationHandler run when a revocation is requested while held, or null if the lock is
   *     not revocable (a revocable lock watches its own node, as Curator's does)
   */
  public static Acquisition start(
      LockContext context, List<Slot> slots, Runnable revocationHandler) {
    if (slots.isEmpty()) {
      throw new IllegalArgumentException("an acquisition needs at least one queue");
    }
    Acquisition acquisition = new Acquisition(context, slots, revocationHandler);
    context.client().getConnectionStateListenable().addListener(acquisition.connectionListener);
    acquisition.enqueue(0);
    return acquisition;
  }

  /** Completes when the lock is held; fails with a {@link LockException}, or when cancelled. */
  public CompletionStage<Void> granted() {
    return granted.minimalCompletionStage();
  }

  /**
   * Waits until the lock is held, the budget runs out, or the thread is interrupted. A budget that
   * runs out before the first reading of the queue still lets that one attempt finish, bounded by
   * the client's connection timeout, so that a zero budget means "try once".
   *
   * @param timeoutNanos the budget, or a negative value to wait as long as it takes
   * @return true if held; false if the budget ran out and the attempt was withdrawn
   * @throws InterruptedException if interrupted before the lock was granted (attempt withdrawn)
   * @throws LockException if the acquisition failed
   */
  public boolean await(long timeoutNanos) throws InterruptedException {
    try {
      if (timeoutNanos < 0) {
        granted.get();
      } else {
        awaitWithin(timeoutNanos);
      }
      return true;
    } catch (TimeoutException e) {
      return !withdraw();
    } catch (InterruptedException e) {
      if (withdraw()) {
        throw e;
      }
      Thread.currentThread().interrupt(); // granted before we could withdraw: keep the grant
      return true;
    } catch (ExecutionException e) {
      throw asLockException(e.getCause());
    } catch (CancellationException e) {
      return false;
    }
  }

  private void awaitWithin(long timeoutNanos)
      throws InterruptedException, ExecutionException, TimeoutException {
    try {
      granted.get(timeoutNanos, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      long graceMillis = context.client().getZookeeperClient().getConnectionTimeoutMs();
      try {
        attempted.get(graceMillis, TimeUnit.MILLISECONDS);
      } catch (TimeoutException | ExecutionException ignored) {
        // the first attempt did not finish in time either
      }
      if (!granted.isDone()) {
        throw e;
      }
      granted.get();
    }
  }

  /**
   * Withdraws the attempt unless it was already granted: deletes our nodes (guaranteed), removes
   * our watch. Safe to call at any time and from any thread.
   *
   * @return true if the lock was not granted and never will be; false if it was granted
   */
  public boolean withdraw() {
    List<String> ours;
    PredecessorWatch watched;
    stateLock.lock();
    try {
      if (!phase.isWaiting()) {
        return phase == Phase.CANCELLED || phase == Phase.FAILED;
      }
      phase = Phase.CANCELLED;
      ours = nodes;
      watched = watch;
      watch = null;
    } finally {
      stateLock.unlock();
    }
    finish(ours, watched);
    granted.completeExceptionally(new CancellationException("withdrawn"));
    attempted.complete(null);
    return true;
  }

  /**
   * Releases the hold: deletes our nodes and waits until ZooKeeper confirmed it or the deletion was
   * handed to Curator's background retries. Releasing a lost hold only clears local state (and
   * deletes what may be left of our nodes) and logs a warning.
   */
  public void release() {
    List<String> ours;
    String lost;
    stateLock.lock();
    try {
      if (phase == Phase.RELEASED) {
        return;
      }
      if (!phase.isHolding() && phase != Phase.LOST) {
        throw new IllegalStateException(
            "release of an acquisition that was never granted: " + phase);
      }
      lost = phase == Phase.LOST ? lostReason : null;
      phase = Phase.RELEASED;
      ours = nodes;
    } finally {
      stateLock.unlock();
    }
    context.client().getConnectionStateListenable().removeListener(connectionListener);
    if (lost != null) {
      log.warn(
          "Released lock {} after it was lost ({}); local state cleared",
          context.description(),
          lost);
    }
    zk.deleteNow(ours);
    context.emit(LockState.RELEASED, fencingToken());
  }

  /** The fencing token: the zxid that created our nodes. */
  public long fencingToken() {
    stateLock.lock();
    try {
      return fencingToken;
    } finally {
      stateLock.unlock();
    }
  }

  /** The fencing token, or a {@link LockOwnershipLostException} if the hold was lost. */
  public long checkedFencingToken() {
    checkNotLost();
    return fencingToken();
  }

  /** Our node paths, one per queue, as the client sees them. */
  public List<String> nodePaths() {
    stateLock.lock();
    try {
      return nodes;
    } finally {
      stateLock.unlock();
    }
  }

  /** Throws {@link LockOwnershipLostException} if the hold was lost. */
  public void checkNotLost() {
    stateLock.lock();
    try {
      if (phase == Phase.LOST) {
        throw new LockOwnershipLostException(
            "Lock "
                + context.description()
                + " was lost by session 0x"
                + Long.toHexString(sessionId)
                + ": "
                + lostReason);
      }
    } finally {
      stateLock.unlock();
    }
  }

  /** One check operation per node of ours, for the caller's transaction. */
  public List<CuratorOp> ownershipChecks() {
    checkNotLost();
    return zk.checks(nodePaths());
  }

  // ---- enqueuing ----

  private void enqueue(int e) {
    String id;
    stateLock.lock();
    try {
      if (epoch != e || phase != Phase.ENQUEUING) {
        return;
      }
      id = protectionId;
    } finally {
      stateLock.unlock();
    }
    Callbacks.when(zk.create(slots, id), (created, failure) -> onCreated(e, created, failure));
  }

  private void onCreated(int e, ZkAsync.Created created, Throwable failure) {
    if (failure == null) {
      if (adopt(e, created)) {
        readQueue(e);
      }
      return;
    }
    switch (Retries.code(failure)) {
      case NONODE:
        createParentsThenEnqueue(e, failure);
        break;
      case CONNECTIONLOSS:
      case OPERATIONTIMEOUT:
      case NODEEXISTS: // only a node tied to a fixed suffix can exist: a retry of our own create
        retryCreate(e, failure, () -> recover(e));
        break;
      case SESSIONEXPIRED:
      case SESSIONMOVED:
        retryCreate(e, failure, () -> enqueue(e));
        break;
      default:
        fail(e, failure);
    }
  }

  /** Takes the created nodes as ours, unless the attempt was withdrawn or superseded meanwhile. */
  private boolean adopt(int e, ZkAsync.Created created) {
    stateLock.lock();
    try {
      if (epoch == e && phase == Phase.ENQUEUING) {
        nodes = created.nodePaths();
        sessionId = created.sessionId();
        fencingToken = created.czxid();
        createFailures = 0;
        return true;
      }
    } finally {
      stateLock.unlock();
    }
    zk.deleteInBackground(created.nodePaths());
    return false;
  }

  private void retryCreate(int e, Throwable failure, Runnable retry) {
    OptionalLong delay;
    stateLock.lock();
    try {
      if (epoch != e || phase != Phase.ENQUEUING) {
        return;
      }
      delay = Retries.delayMillis(context.client(), createFailures++, startNanos);
    } finally {
      stateLock.unlock();
    }
    if (delay.isPresent()) {
      Background.schedule(delay.getAsLong(), retry);
    } else {
      fail(e, failure);
    }
  }

  private void createParentsThenEnqueue(int e, Throwable failure) {
    boolean giveUp;
    stateLock.lock();
    try {
      if (epoch != e || phase != Phase.ENQUEUING) {
        return;
      }
      giveUp = ++parentCreations > MAX_PARENT_CREATIONS;
    } finally {
      stateLock.unlock();
    }
    if (giveUp) {
      fail(e, failure);
      return;
    }
    // A container can be reaped between its creation and our create: then we come back here.
    CompletableFuture<Void> parents = CompletableFuture.completedFuture(null);
    for (Slot slot : slots) {
      parents = parents.thenCompose(v -> zk.createContainers(slot.path()));
    }
    Callbacks.when(
        parents,
        (v, error) -> {
          if (error == null || Retries.code(error) == Code.NODEEXISTS) {
            enqueue(e);
          } else if (Retries.isRetryable(context.client(), error)) {
            retryCreate(e, error, () -> enqueue(e));
          } else {
            fail(e, error);
          }
        });
  }

  /**
   * After a create whose answer was lost: look for our protection id among the children. A node
   * found there is ours only if its ephemeral owner is our current session; a node of an earlier
   * session (which Curator abandoned) is deleted and we enqueue afresh.
   */
  private void recover(int e) {
    String id;
    stateLock.lock();
    try {
      if (epoch != e || phase != Phase.ENQUEUING) {
        return;
      }
      id = protectionId;
    } finally {
      stateLock.unlock();
    }
    Callbacks.when(
        zk.children(slotPaths(), null),
        (lists, failure) -> {
          if (failure != null) {
            retryCreate(e, failure, () -> recover(e));
          } else {
            onRecoveryRead(e, id, lists);
          }
        });
  }

  private void onRecoveryRead(int e, String id, List<List<String>> lists) {
    List<String> found = new ArrayList<>();
    String prefix = NodeNames.prefix(id);
    for (int i = 0; i < slots.size(); i++) {
      for (String child : lists.get(i)) {
        if (child.startsWith(prefix)) {
          found.add(ZKPaths.makePath(slots.get(i).path(), child));
          break;
        }
      }
    }
    if (found.isEmpty()) {
      enqueue(e); // the create never happened; the same protection id is safe to reuse
      return;
    }
    long current = zk.currentSessionId();
    Callbacks.when(
        zk.getData(found.get(0), null),
        (data, failure) -> {
          boolean ours =
              failure == null
                  && found.size() == slots.size()
                  && data.stat().getEphemeralOwner() == current
                  && current != 0;
          if (ours) {
            if (adopt(
                e, new ZkAsync.Created(List.copyOf(found), data.stat().getCzxid(), current))) {
              readQueue(e);
            }
          } else {
            log.info(
                "Not adopting {} found after a lost create: not owned by session 0x{}",
                found,
                Long.toHexString(current));
            zk.deleteInBackground(found);
            renewProtectionId(e);
            enqueue(e);
          }
        });
  }

  private void renewProtectionId(int e) {
    stateLock.lock();
    try {
      if (epoch == e) {
        protectionId = NodeNames.newProtectionId();
      }
    } finally {
      stateLock.unlock();
    }
  }

  // ---- reading the queue and deciding ----

  private void readQueue(int e) {
    Watcher childWatcher = slots.size() == 1 ? queueWatcher : null;
    Callbacks.when(
        zk.children(slotPaths(), childWatcher),
        (lists, failure) -> {
          if (failure == null) {
            onQueueRead(e, lists);
          } else {
            onReadFailed(e, failure);
          }
        });
  }

  private void onQueueRead(int e, List<List<String>> lists) {
    Verdict verdict;
    RuntimeException failure = null;
    stateLock.lock();
    try {
      if (epoch != e || !phase.isWaiting()) {
        return;
      }
      verdict = judge(lists);
    } catch (RuntimeException driverFailure) {
      verdict = null;
      failure = driverFailure;
    } finally {
      stateLock.unlock();
    }
    if (verdict == null) {
      fail(e, failure);
    } else if (verdict.nodesMissing()) {
      onNodesLost(e, "our lock node disappeared while waiting");
    } else if (verdict.holds()) {
      grant(e);
    } else {
      watchPredecessor(e, verdict.watchPath(), verdict.watchHead());
    }
    attempted.complete(null);
  }

  /** Asks each queue's driver about our node; the first queue that does not hold decides. */
  private Verdict judge(List<List<String>> lists) {
    for (int i = 0; i < slots.size(); i++) {
      Slot slot = slots.get(i);
      String ours = ZKPaths.getNodeFromPath(nodes.get(i));
      List<String> children = lists.get(i);
      if (!children.contains(ours)) {
        return Verdict.MISSING;
      }
      List<String> sorted = QueueOrder.sort(children, slot.driver());
      LockDecision decision = slot.driver().decide(sorted, ours);
      if (!decision.holds()) {
        String node = decision.watchNode();
        if (node.equals(ours) || !children.contains(node)) {
          throw new IllegalStateException(
              "driver "
                  + slot.driver()
                  + " asked to watch '"
                  + node
                  + "', which is not another child of "
                  + slot.path());
        }
        // We are next after the head, and nothing can sort before us later: its deletion hands
        // the lock to us without another read.
        boolean head =
            slots.size() == 1
                && slot.driver().newNodesSortLast()
                && sorted.indexOf(node) == 0
                && sorted.indexOf(ours) == 1;
        return new Verdict(false, ZKPaths.makePath(slot.path(), node), head);
      }
    }
    return Verdict.HOLD;
  }

  private void onReadFailed(int e, Throwable failure) {
    if (Retries.code(failure) == Code.SESSIONEXPIRED) {
      onNodesLost(e, "session expired while waiting");
    } else {
      fail(e, failure);
    }
  }

  // ---- waiting ----

  /** A getData watch on the node we wait for, counted in the WatchRegistry while armed. */
  private final class PredecessorWatch implements Watcher {
    final String path;
    final WatchRegistry.Key key;
    private final AtomicBoolean ended = new AtomicBoolean();

    PredecessorWatch(String path, long session) {
      this.path = path;
      this.key = new WatchRegistry.Key(session, zk.toZk(path));
      WatchRegistry.arm(key);
    }

    @Override
    public void process(WatchedEvent event) {
      if (event.getType() == EventType.None) {
        if (event.getState() == KeeperState.Expired || event.getState() == KeeperState.Closed) {
          end(); // the session's watches are gone; the connection listener handles the rest
        }
        return;
      }
      end();
      onPredecessorChanged(this, event.getType() == EventType.NodeDeleted);
    }

    /** Marks the watch ended; true if it was the engine's last watch on this path and session. */
    boolean end() {
      return ended.compareAndSet(false, true) && WatchRegistry.disarm(key);
    }

    /**
     * Ends the watch and, if no waiter of the session still needs it, removes it from the server.
     */
    void withdraw() {
      if (end()) {
        zk.removeDataWatches(path, key.sessionId());
      }
    }
  }

  private void watchPredecessor(int e, String path, boolean head) {
    PredecessorWatch armed;
    stateLock.lock();
    try {
      if (epoch != e || !phase.isWaiting()) {
        return;
      }
      armed = new PredecessorWatch(path, sessionId);
      watch = armed;
      watchIsHead = head;
      phase = Phase.WAITING;
    } finally {
      stateLock.unlock();
    }
    Callbacks.when(
        zk.getData(path, armed),
        (data, failure) -> {
          if (failure == null) {
            return; // armed: the event brings us back
          }
          armed.end();
          if (Retries.code(failure) == Code.NONODE) {
            onPredecessorChanged(armed, true); // already gone, and no watch was left
          } else {
            onReadFailed(e, failure);
          }
        });
  }

  private void onPredecessorChanged(PredecessorWatch fired, boolean deleted) {
    int e;
    boolean takeOver;
    stateLock.lock();
    try {
      if (watch != fired || phase != Phase.WAITING) {
        return;
      }
      watch = null;
      e = epoch;
      takeOver = deleted && watchIsHead;
    } finally {
      stateLock.unlock();
    }
    if (takeOver) {
      confirmHead(e);
    } else {
      readQueue(e);
    }
  }

  /**
   * The head of an append-only queue was deleted and we were next: we hold, provided our node is
   * still there and still ours. Reading it also arms the watch that tells us if we lose it.
   */
  private void confirmHead(int e) {
    String ours;
    long session;
    stateLock.lock();
    try {
      if (epoch != e || phase != Phase.WAITING) {
        return;
      }
      ours = nodes.get(0);
      session = sessionId;
    } finally {
      stateLock.unlock();
    }
    Callbacks.when(
        zk.getData(ours, ownNodeWatcher),
        (data, failure) -> {
          if (failure == null && data.stat().getEphemeralOwner() == session) {
            holdWithOwnNodeWatched(e, data);
          } else if (failure == null || Retries.code(failure) == Code.NONODE) {
            onNodesLost(e, "our lock node disappeared while waiting");
          } else {
            onReadFailed(e, failure);
          }
        });
  }

  /**
   * Our nodes vanished while waiting (session expiry, or deleted by someone): enqueue again as the
   * client's retry policy allows, else fail.
   */
  private void onNodesLost(int e, String reason) {
    List<String> ours;
    PredecessorWatch watched;
    OptionalLong delay;
    int next;
    stateLock.lock();
    try {
      if (epoch != e || !phase.isWaiting()) {
        return;
      }
      ours = nodes;
      watched = watch;
      watch = null;
      nodes = List.of();
      delay = Retries.delayMillis(context.client(), requeues++, startNanos);
      if (delay.isPresent()) {
        next = ++epoch;
        protectionId = NodeNames.newProtectionId();
        phase = Phase.ENQUEUING;
        createFailures = 0;
        parentCreations = 0;
      } else {
        next = -1;
      }
    } finally {
      stateLock.unlock();
    }
    if (watched != null) {
      watched.withdraw();
    }
    zk.deleteInBackground(ours);
    if (delay.isPresent()) {
      log.info("Lock {}: {}; enqueuing again", context.description(), reason);
      Background.schedule(delay.getAsLong(), () -> enqueue(next));
    } else {
      fail(
          e,
          new LockException(
              "Lock "
                  + context.description()
                  + ": "
                  + reason
                  + ", and the retry policy allows no further attempt",
              null));
    }
  }

  private void fail(int e, Throwable failure) {
    List<String> ours;
    PredecessorWatch watched;
    stateLock.lock();
    try {
      if (epoch != e || !phase.isWaiting()) {
        return;
      }
      phase = Phase.FAILED;
      ours = nodes;
      watched = watch;
      watch = null;
    } finally {
      stateLock.unlock();
    }
    finish(ours, watched);
    granted.completeExceptionally(asLockException(failure));
    attempted.complete(null);
  }

  /** Ends an attempt that will not be granted: no listener, no watch, no node left. */
  private void finish(List<String> ours, PredecessorWatch watched) {
    context.client().getConnectionStateListenable().removeListener(connectionListener);
    if (watched != null) {
      watched.withdraw();
    }
    zk.deleteInBackground(ours);
  }

  // ---- holding ----

  private void grant(int e) {
    if (revocationHandler != null) {
      watchOwnNodeThenGrant(e);
    } else {
      becomeHeld(e, false);
    }
  }

  /**
   * Moves a waiting attempt to HELD: listeners hear it first, then the caller wakes.
   *
   * @return false if the attempt was withdrawn or superseded meanwhile
   */
  private boolean becomeHeld(int e, boolean ownNodeWatchArmed) {
    long token;
    stateLock.lock();
    try {
      if (epoch != e || !phase.isWaiting()) {
        return false;
      }
      phase = Phase.HELD;
      ownNodeWatched |= ownNodeWatchArmed;
      token = fencingToken;
    } finally {
      stateLock.unlock();
    }
    context.emit(LockState.HELD, token);
    granted.complete(null);
    return true;
  }

  /** We hold, and the read of our own node armed its watch; honour a revocation already asked. */
  private void holdWithOwnNodeWatched(int e, ZkAsync.NodeData ownNode) {
    if (becomeHeld(e, true)
        && revocationHandler != null
        && Arrays.equals(ownNode.data(), REVOKE_MESSAGE)) {
      revocationHandler.run();
    }
  }

  /**
   * A revocable lock watches its own node before the grant, as Curator's does, so that a revocation
   * request is never missed; a request already written is honoured right after the grant.
   */
  private void watchOwnNodeThenGrant(int e) {
    String ours;
    stateLock.lock();
    try {
      if (epoch != e || !phase.isWaiting()) {
        return;
      }
      ours = nodes.get(0);
    } finally {
      stateLock.unlock();
    }
    Callbacks.when(
        zk.getData(ours, ownNodeWatcher),
        (data, failure) -> {
          if (failure == null) {
            holdWithOwnNodeWatched(e, data);
          } else if (Retries.code(failure) == Code.NONODE) {
            onNodesLost(e, "our lock node disappeared while waiting");
          } else {
            onReadFailed(e, failure);
          }
        });
  }

  /** The child watch of a holder: the queue changed, so start watching our own node. */
  private void onQueueEvent(WatchedEvent event) {
    if (event.getType() != EventType.NodeChildrenChanged) {
      return;
    }
    int e;
    stateLock.lock();
    try {
      e = epoch;
    } finally {
      stateLock.unlock();
    }
    watchOwnNode(e);
  }

  private void watchOwnNode(int e) {
    String ours;
    stateLock.lock();
    try {
      if (epoch != e || !phase.isHolding() || ownNodeWatched) {
        return;
      }
      ownNodeWatched = true;
      ours = nodes.get(0);
    } finally {
      stateLock.unlock();
    }
    Callbacks.when(
        zk.getData(ours, ownNodeWatcher), (data, failure) -> onOwnNodeRead(e, data, failure));
  }

  private void onOwnNodeRead(int e, ZkAsync.NodeData data, Throwable failure) {
    if (failure == null) {
      if (revocationHandler != null && Arrays.equals(data.data(), REVOKE_MESSAGE)) {
        revocationHandler.run();
      }
      return;
    }
    stateLock.lock();
    try {
      ownNodeWatched = false;
    } finally {
      stateLock.unlock();
    }
    if (Retries.code(failure) == Code.NONODE) {
      markLost(e, "our lock node was deleted");
    } else {
      log.debug(
          "Could not watch our lock node of {}: {}", context.description(), failure.toString());
    }
  }

  private void onOwnNodeEvent(WatchedEvent event) {
    if (event.getType() == EventType.None) {
      return; // connection events reach us through the connection listener
    }
    int e;
    stateLock.lock();
    try {
      ownNodeWatched = false;
      e = epoch;
    } finally {
      stateLock.unlock();
    }
    if (event.getType() == EventType.NodeDeleted) {
      markLost(e, "our lock node was deleted");
    } else {
      watchOwnNode(e); // data changed (a revocation request?) or watch removed: look again
    }
  }

  private void markLost(int e, String reason) {
    long token;
    stateLock.lock();
    try {
      if (epoch != e || !phase.isHolding()) {
        return;
      }
      phase = Phase.LOST;
      lostReason = reason;
      token = fencingToken;
    } finally {
      stateLock.unlock();
    }
    log.warn("Lock {} lost: {}", context.description(), reason);
    context.emit(LockState.LOST, token);
  }

  // ---- connection and session ----

  private void onConnection(ConnectionState state) {
    switch (state) {
      case SUSPENDED:
      case READ_ONLY:
        onSuspended();
        break;
      case CONNECTED:
      case RECONNECTED:
        onReconnected();
        break;
      case LOST:
        onSessionLost();
        break;
    }
  }

  private void onSuspended() {
    long token;
    stateLock.lock();
    try {
      if (phase != Phase.HELD) {
        return;
      }
      phase = Phase.AT_RISK;
      token = fencingToken;
    } finally {
      stateLock.unlock();
    }
    context.emit(LockState.AT_RISK, token);
  }

  private void onReconnected() {
    Phase now;
    int e;
    long session;
    boolean created;
    stateLock.lock();
    try {
      now = phase;
      e = epoch;
      session = sessionId;
      created = !nodes.isEmpty();
    } finally {
      stateLock.unlock();
    }
    boolean sameSession = zk.currentSessionId() == session;
    if (now.isHolding()) {
      if (sameSession) {
        verifyOwnership(e);
      } else {
        markLost(e, "the session that held it ended");
      }
    } else if (now.isWaiting() && created && !sameSession) {
      onNodesLost(e, "the session that enqueued it ended");
    }
  }

  /** After a reconnect: is our node still there, still ours? One getData, which also re-arms. */
  private void verifyOwnership(int e) {
    List<String> ours;
    long session;
    stateLock.lock();
    try {
      ours = nodes;
      session = sessionId;
    } finally {
      stateLock.unlock();
    }
    CompletableFuture<Boolean> present =
        ours.size() == 1
            ? CompletableFuture.completedFuture(true)
            : zk.children(slotPaths(), null).thenApply(lists -> allPresent(ours, lists));
    Callbacks.when(
        present.thenCompose(
            all ->
                zk.getData(ours.get(0), ours.size() == 1 ? ownNodeWatcher : null)
                    .thenApply(data -> all && data.stat().getEphemeralOwner() == session)),
        (stillOurs, failure) -> {
          if (failure == null && stillOurs) {
            backToHeld(e, ours.size() == 1);
          } else if (failure == null || Retries.code(failure) == Code.NONODE) {
            markLost(e, "our lock node is gone or no longer ours after reconnecting");
          } else {
            log.debug(
                "Could not verify lock {} after reconnecting: {}",
                context.description(),
                failure.toString());
          }
        });
  }

  private static boolean allPresent(List<String> ours, List<List<String>> lists) {
    for (int i = 0; i < ours.size(); i++) {
      if (!lists.get(i).contains(ZKPaths.getNodeFromPath(ours.get(i)))) {
        return false;
      }
    }
    return true;
  }

  private void backToHeld(int e, boolean watched) {
    long token;
    stateLock.lock();
    try {
      if (epoch != e || !phase.isHolding()) {
        return;
      }
      ownNodeWatched |= watched;
      if (phase == Phase.HELD) {
        return;
      }
      phase = Phase.HELD;
      token = fencingToken;
    } finally {
      stateLock.unlock();
    }
    context.emit(LockState.HELD, token);
  }

  private void onSessionLost() {
    Phase now;
    int e;
    boolean created;
    stateLock.lock();
    try {
      now = phase;
      e = epoch;
      created = !nodes.isEmpty();
    } finally {
      stateLock.unlock();
    }
    if (now.isHolding()) {
      markLost(e, "the session was lost");
    } else if (now.isWaiting() && created) {
      onNodesLost(e, "the session was lost while waiting");
    }
  }

  // ---- helpers ----

  private List<String> slotPaths() {
    List<String> paths = new ArrayList<>(slots.size());
    for (Slot slot : slots) {
      paths.add(slot.path());
    }
    return paths;
  }

  private LockException asLockException(Throwable failure) {
    Throwable cause = Retries.unwrap(failure);
    if (cause instanceof LockException && cause.getMessage().contains(context.description())) {
      return (LockException) cause;
    }
    return new LockException("Lock " + context.description() + ": " + cause.getMessage(), cause);
  }
}

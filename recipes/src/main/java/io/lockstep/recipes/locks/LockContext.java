package io.lockstep.recipes.locks;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.listen.Listenable;
import org.apache.curator.framework.listen.StandardListenerManager;

/**
 * What every acquisition of one lock object shares: the client and its ZooKeeper calls, the lock's
 * name, its listeners, and the clock and scheduler (injected here, so tests can drive time).
 */
final class LockContext {
  /**
   * How long a hold goes before it watches its own node, when nothing else would tell it of the
   * node's deletion: a hold shorter than this (most contended holds) costs no request and no watch
   * event for it, and a deletion within it is noticed when it ends.
   */
  static final long OWN_NODE_WATCH_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final CuratorFramework client;
  private final String description;
  private final String recipe;
  private final Retries retries;
  private final Scheduler scheduler;
  private final ZkRequests zk;
  private final NodeDeletes deletes;
  private final Supplier<String> protectionIds;
  private volatile Cohort cohort; // set once, for a lock object that hands off locally
  private volatile int maxInARow;
  private final StandardListenerManager<LockStateListener> listeners =
      StandardListenerManager.standard();
  private final StandardListenerManager<LockObserver> observers =
      StandardListenerManager.standard();
  private final AtomicInteger live = new AtomicInteger(); // acquisitions waiting or holding
  private volatile boolean queueSeen; // the last read of this lock's queue found other nodes
  private volatile long ownNodeWatchGraceNanos = OWN_NODE_WATCH_GRACE_NANOS;

  /**
   * @param description the lock path, or the paths of a multi-lock, for messages and events
   * @param recipe the recipe's name, for observers and events
   */
  LockContext(CuratorFramework client, String description, String recipe) {
    this(
        client,
        description,
        recipe,
        System::nanoTime,
        Background.INSTANCE,
        NodeNames::newProtectionId);
  }

  LockContext(
      CuratorFramework client,
      String description,
      String recipe,
      LongSupplier clock,
      Scheduler scheduler,
      Supplier<String> protectionIds) {
    this.client = Objects.requireNonNull(client, "client");
    this.description = Objects.requireNonNull(description, "description");
    this.recipe = Objects.requireNonNull(recipe, "recipe");
    this.retries = new Retries(() -> client.getZookeeperClient().getRetryPolicy(), clock);
    this.scheduler = scheduler;
    this.zk = new ZkRequests(client, retries, scheduler);
    this.deletes = new NodeDeletes(zk, scheduler);
    this.protectionIds = protectionIds;
  }

  CuratorFramework client() {
    return client;
  }

  /** The lock path (or paths) for messages. */
  String description() {
    return description;
  }

  /** The recipe's name, for observers and events. */
  String recipe() {
    return recipe;
  }

  /**
   * Whether the next attempt will likely find a queue: the last read of this single-queue lock
   * found other nodes than ours. Then its first read leaves no child watch, which would only fire
   * at the next enqueue or dequeue (see {@code AcquisitionState}).
   */
  boolean expectsQueue() {
    return queueSeen;
  }

  /** A read of this lock's single queue found other nodes than ours, or none. */
  void sawQueue(boolean others) {
    queueSeen = others;
  }

  /** How long this lock's holds go before they watch their own node (see {@link Hold}). */
  long ownNodeWatchGraceNanos() {
    return ownNodeWatchGraceNanos;
  }

  /** Sets the grace of {@link #ownNodeWatchGraceNanos()}: for tests that count requests. */
  void ownNodeWatchGrace(long nanos) {
    ownNodeWatchGraceNanos = nanos;
  }

  /** The observers of this lock object. */
  StandardListenerManager<LockObserver> observers() {
    return observers;
  }

  boolean hasObservers() {
    return observers.size() > 0;
  }

  Retries retries() {
    return retries;
  }

  Scheduler scheduler() {
    return scheduler;
  }

  ZkRequests zk() {
    return zk;
  }

  NodeDeletes deletes() {
    return deletes;
  }

  Supplier<String> protectionIds() {
    return protectionIds;
  }

  /**
   * Makes this lock object's attempts members of its process's cohort on its single queue: they
   * take turns on one node, passing it on in memory at most {@code maxInARow} times in a row while
   * another participant may wait.
   */
  void handOffLocally(Slot slot, int maxInARow) {
    this.maxInARow = maxInARow;
    this.cohort = clientEvents().cohortOf(zk.toZk(slot.path()), slot, client);
  }

  /** Starts an attempt of this lock object in the given queues. */
  Attempt startAttempt(List<Slot> slots, Runnable revocationHandler) {
    Cohort shared = cohort;
    return shared == null
        ? Acquisition.start(this, slots, revocationHandler)
        : shared.join(this, maxInARow);
  }

  /** The client's connection and close events, shared by all its locks. */
  ClientEvents clientEvents() {
    return ClientEvents.of(client, scheduler);
  }

  Listenable<LockStateListener> listeners() {
    return listeners;
  }

  /** An acquisition of this lock object started. */
  void attemptStarted() {
    live.incrementAndGet();
  }

  /** An acquisition of this lock object ended without a grant, or its hold was released. */
  void attemptEnded() {
    live.decrementAndGet();
  }

  /** Whether an acquisition of this lock object is waiting or holding. */
  boolean inUse() {
    return live.get() > 0;
  }

  /** Whether any listener would hear a state change. */
  boolean hasListeners() {
    return listeners.size() > 0;
  }

  /** Tells every listener that a hold entered {@code state}; runs user code. */
  void tellListeners(LockState state, long fencingToken) {
    LockStateChange change = new LockStateChange(description, state, fencingToken);
    listeners.forEach(listener -> listener.stateChanged(change));
  }
}

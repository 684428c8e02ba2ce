package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.queue.NodeNames;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.internal.zk.NodeCreates;
import io.lockstep.recipes.internal.zk.NodeDeletes;
import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.internal.zk.Scheduler;
import io.lockstep.recipes.internal.zk.ZkRequests;
import io.lockstep.recipes.locks.LockObserver;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockStateChange;
import io.lockstep.recipes.locks.LockStateListener;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.listen.Listenable;

/**
 * What every attempt of one lock object shares: its client (or namespace facade) and that client's
 * ZooKeeper calls, the lock's name and recipe for messages and events, its listeners and observers,
 * and what its last read of the queue found. The clock and the scheduler are the client's, in its
 * {@link LockEngine}.
 */
public final class LockSettings {
  /**
   * How long a hold goes before it watches its own node, when nothing else would tell it of the
   * node's deletion: a hold shorter than this (most contended holds) costs no request and no watch
   * event for it, and a deletion within it is noticed when it ends.
   */
  static final long OWN_NODE_WATCH_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final LockEngine engine;
  private final CuratorFramework client;
  private final String description;
  private final String recipe;
  private final boolean observed;
  private final Requests requests;
  private final Supplier<String> protectionIds;

  /**
   * How the locks of one client facade (one namespace) talk to ZooKeeper. It holds no state of any
   * lock, so the engine keeps one per namespace rather than one per lock object: a service with a
   * million idle keyed locks keeps one, not a million.
   */
  private record Requests(
      Retries retries, ZkRequests zk, NodeCreates creates, NodeDeletes deletes) {
    static Requests of(CuratorFramework client, LockEngine engine) {
      Retries retries =
          new Retries(
              () -> client.getZookeeperClient().getRetryPolicy(),
              engine.clock(),
              engine.events()::connection);
      ZkRequests zk = new ZkRequests(client, retries, engine.scheduler());
      return new Requests(retries, zk, new NodeCreates(zk), new NodeDeletes(zk));
    }
  }

  private static final AtomicIntegerFieldUpdater<LockSettings> LIVE =
      AtomicIntegerFieldUpdater.newUpdater(LockSettings.class, "live");

  private static final AtomicReferenceFieldUpdater<LockSettings, Audience> AUDIENCE =
      AtomicReferenceFieldUpdater.newUpdater(LockSettings.class, Audience.class, "audience");

  /** Who hears of this lock object: its listeners and its observers. */
  private record Audience(
      Listeners<LockStateListener> listeners, Listeners<LockObserver> observers) {}

  // made when first asked for, and no atomic object of its own: an idle lock object costs no more
  // than Curator's (a keyed service keeps one per key); once made, the same one for good
  private volatile Audience audience;
  private volatile int live; // acquisitions waiting or holding
  private volatile boolean queueSeen; // the last read of this lock's queue found other nodes
  private volatile long ownNodeWatchGraceNanos = OWN_NODE_WATCH_GRACE_NANOS;

  /**
   * @param description the lock path, or the paths of a multi-lock, for messages and events
   * @param recipe the recipe's name, for observers and events
   * @param observed whether observers and the Flight Recorder hear of its attempts (a place shared
   *     by local holds is not: its members are)
   */
  LockSettings(
      LockEngine engine,
      CuratorFramework client,
      String description,
      String recipe,
      boolean observed,
      Supplier<String> protectionIds) {
    this.engine = Objects.requireNonNull(engine, "engine");
    this.client = Objects.requireNonNull(client, "client");
    this.description = Objects.requireNonNull(description, "description");
    this.recipe = Objects.requireNonNull(recipe, "recipe");
    this.observed = observed;
    this.requests =
        engine.shared(
            "requests:" + client.getNamespace(),
            Requests.class,
            key -> Requests.of(client, engine));
    this.protectionIds = protectionIds;
  }

  /** The settings of a lock object of {@code client}'s engine. */
  public static LockSettings of(CuratorFramework client, String description, String recipe) {
    return new LockSettings(
        LockEngine.of(client), client, description, recipe, true, NodeNames::newProtectionId);
  }

  /** The settings of a place shared by local holds: nobody observes it but through its members. */
  public static LockSettings unobserved(LockEngine engine, CuratorFramework client, String path) {
    return new LockSettings(engine, client, path, "place", false, NodeNames::newProtectionId);
  }

  public LockEngine engine() {
    return engine;
  }

  public CuratorFramework client() {
    return client;
  }

  /** The lock path (or paths) for messages. */
  public String description() {
    return description;
  }

  /** The recipe's name, for observers and events. */
  String recipe() {
    return recipe;
  }

  /** Whether observers and the Flight Recorder hear of this lock's attempts. */
  boolean observed() {
    return observed;
  }

  public Retries retries() {
    return requests.retries();
  }

  public Scheduler scheduler() {
    return engine.scheduler();
  }

  public ZkRequests zk() {
    return requests.zk();
  }

  NodeCreates creates() {
    return requests.creates();
  }

  /**
   * Whether a create of this lock's in {@code slot} runs no user code: see {@link
   * NodeCreates#resolved}.
   */
  public boolean resolved(Slot slot) {
    return creates().resolved(slot);
  }

  /**
   * Resolves how this lock's nodes in {@code slot} are created, unless that was done: asks the
   * client's ACLProvider in the calling thread (see {@link NodeCreates#resolve}).
   *
   * @throws io.lockstep.recipes.locks.LockException if the ACLProvider failed
   */
  public void resolve(Slot slot) {
    if (!resolved(slot)) {
      creates().resolve(slot, protectionIds.get());
    }
  }

  NodeDeletes deletes() {
    return requests.deletes();
  }

  Supplier<String> protectionIds() {
    return protectionIds;
  }

  /**
   * Completes as soon as ZooKeeper cannot be reached: at once if the client is not connected now,
   * else at its next disconnect (see {@code ClientEvents}).
   */
  public CompletableFuture<Void> unreachable() {
    return engine.events().unreachable();
  }

  /**
   * Whether the client is connected now to a server that takes writes (see {@code ClientEvents}).
   */
  boolean connected() {
    return engine.events().connected();
  }

  /**
   * Whether the client waits for its first connection (see {@code ClientEvents}): a timed call then
   * waits its grace for it rather than calling ZooKeeper unreachable at once.
   */
  public boolean awaitingFirstConnection() {
    return engine.events().awaitingFirstConnection();
  }

  /** How many times the client lost its connection or closed, so far (see {@code ClientEvents}). */
  long disconnects() {
    return engine.events().disconnects();
  }

  /** Now, in nanoseconds, on the engine's clock: the only time the engine reads. */
  public long now() {
    return engine.now();
  }

  /** The client's connection timeout: how long a release waits for its delete while connected. */
  public long connectionTimeoutNanos() {
    return TimeUnit.MILLISECONDS.toNanos(client.getZookeeperClient().getConnectionTimeoutMs());
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

  /** How long this lock's holds go before they watch their own node (see {@link GrantedState}). */
  long ownNodeWatchGraceNanos() {
    return ownNodeWatchGraceNanos;
  }

  /** Sets the grace of {@link #ownNodeWatchGraceNanos()}: for tests that count requests. */
  public void ownNodeWatchGrace(long nanos) {
    ownNodeWatchGraceNanos = nanos;
  }

  /** The observers of this lock object. */
  public Listenable<LockObserver> observers() {
    return audience().observers();
  }

  /** Calls each observer of this lock object (not its client's). */
  void tellObservers(Consumer<LockObserver> call) {
    Audience current = audience;
    if (current != null) {
      current.observers().forEach(call);
    }
  }

  /** Whether an observer of this lock object or of its client would hear of an attempt. */
  boolean hasObservers() {
    Audience current = audience;
    return observed
        && ((current != null && current.observers().size() > 0) || engine.observers().size() > 0);
  }

  public Listenable<LockStateListener> listeners() {
    return audience().listeners();
  }

  /** Whether any listener would hear a state change. */
  boolean hasListeners() {
    Audience current = audience;
    return current != null && current.listeners().size() > 0;
  }

  /** Tells every listener that a hold entered {@code state}; runs user code. */
  void tellListeners(LockState state, long fencingToken) {
    Audience current = audience;
    if (current != null) {
      LockStateChange change = new LockStateChange(description, state, fencingToken);
      current.listeners().forEach(listener -> listener.stateChanged(change));
    }
  }

  /** The listeners and observers, made at the first call and the same for good. */
  private Audience audience() {
    Audience current = audience;
    if (current == null) {
      AUDIENCE.compareAndSet(this, null, new Audience(new Listeners<>(), new Listeners<>()));
      current = audience;
    }
    return current;
  }

  /** An acquisition of this lock object started. */
  void attemptStarted() {
    LIVE.incrementAndGet(this);
  }

  /** An acquisition of this lock object ended without a grant, or its hold was released. */
  void attemptEnded() {
    LIVE.decrementAndGet(this);
  }

  /** Whether an acquisition of this lock object is waiting or holding. */
  public boolean inUse() {
    return live > 0;
  }
}

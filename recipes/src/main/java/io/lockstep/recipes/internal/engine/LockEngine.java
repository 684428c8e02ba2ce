package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.zk.Background;
import io.lockstep.recipes.internal.zk.Scheduler;
import io.lockstep.recipes.locks.LockObserver;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.apache.curator.CuratorZookeeperClient;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.listen.StandardListenerManager;

/**
 * The engine of one Curator client, shared by every lock made with it and with its namespace
 * facades: the clock and the scheduler, the client's connection and close events, its armed
 * watches, its nodes in each queue, the observers of all its locks, and what its lock objects share
 * beyond that (their places for local handoff). Everything per lock object is in its {@link
 * LockSettings}.
 *
 * <p>Engines are kept per ZooKeeper client while it lives and dropped when it closes (an engine
 * asked for once it is closed is not kept; one whose client, seen only through namespace facades,
 * closed while none of its locks was live is dropped when the next engine is asked for); that map
 * is the engine's only static state.
 */
public final class LockEngine {
  private static final ConcurrentMap<CuratorZookeeperClient, LockEngine> engines =
      new ConcurrentHashMap<>();

  private final LongSupplier clock;
  private final Scheduler scheduler;
  private final ClientEvents events;
  private final WatchRegistry watches = new WatchRegistry();
  private final LocalQueues localQueues = new LocalQueues();
  private final ConcurrentMap<String, Object> shared = new ConcurrentHashMap<>();
  private final StandardListenerManager<LockObserver> observers =
      StandardListenerManager.standard();

  /**
   * An engine of its own, not shared through {@link #of}: for tests that drive time.
   *
   * @param clock the clock, as {@link System#nanoTime()}
   * @param scheduler where timers, retries and notices run
   */
  LockEngine(CuratorFramework client, LongSupplier clock, Scheduler scheduler) {
    this(client, clock, scheduler, () -> {});
    Telemetry.prepare();
  }

  private LockEngine(
      CuratorFramework client, LongSupplier clock, Scheduler scheduler, Runnable onClose) {
    this.clock = clock;
    this.scheduler = scheduler;
    this.events = new ClientEvents(client, scheduler, onClose);
  }

  /** The engine of {@code client} (and of every namespace facade of it). */
  public static LockEngine of(CuratorFramework client) {
    CuratorZookeeperClient key = client.getZookeeperClient();
    Telemetry.prepare(); // here, not in the first timed acquire, nor in the map's lock
    dropClosedUnheard();
    LockEngine engine =
        engines.computeIfAbsent(key, k -> make(client, k, System::nanoTime, Background.INSTANCE));
    listenForClose(client, key, engine);
    return engine;
  }

  /**
   * Listens for the close of {@code client}, or drops its engine if it closed already: Curator
   * stops a client before it tells its listeners, and tells them once, so an engine made or asked
   * for after that hears no close and would be kept for good (and the closed client with it).
   */
  private static void listenForClose(
      CuratorFramework client, CuratorZookeeperClient key, LockEngine engine) {
    engine.events.listenForClose(client);
    if (client.getState() == CuratorFrameworkState.STOPPED) {
      engines.remove(key, engine);
    }
  }

  /**
   * Drops the engines of clients closed unheard: a client seen only through namespace facades,
   * which take no close listener, is polled for its close only while it has live acquisitions, so
   * one closed with none would be kept for good (and the client with it). Checked whenever an
   * engine is asked for; a client with a close listener costs one read.
   */
  private static void dropClosedUnheard() {
    for (LockEngine engine : engines.values()) {
      engine.events.closeIfClosedUnheard();
    }
  }

  /**
   * Makes {@code client}'s engine, shared as {@link #of} shares it, on a clock and a scheduler of
   * the caller's.
   *
   * @throws IllegalStateException if the client has an engine already
   */
  public static void install(CuratorFramework client, LongSupplier clock, Scheduler scheduler) {
    CuratorZookeeperClient key = client.getZookeeperClient();
    Telemetry.prepare();
    boolean[] made = {false};
    LockEngine engine =
        engines.computeIfAbsent(
            key,
            k -> {
              made[0] = true;
              return make(client, k, clock, scheduler);
            });
    if (!made[0]) {
      throw new IllegalStateException(
          "client already runs recipe objects on its clock and scheduler; set them before the"
              + " first recipe object is made with it");
    }
    listenForClose(client, key, engine);
  }

  private static LockEngine make(
      CuratorFramework client,
      CuratorZookeeperClient key,
      LongSupplier clock,
      Scheduler scheduler) {
    return new LockEngine(
        client, clock, scheduler, () -> engines.computeIfPresent(key, (c, e) -> null));
  }

  /** Now, in nanoseconds, on the engine's clock. */
  public long now() {
    return clock.getAsLong();
  }

  LongSupplier clock() {
    return clock;
  }

  Scheduler scheduler() {
    return scheduler;
  }

  /** The client's connection and close events. */
  ClientEvents events() {
    return events;
  }

  /** The client's armed predecessor watches, per session and path. */
  WatchRegistry watches() {
    return watches;
  }

  /** This client's nodes in each single queue. */
  LocalQueues localQueues() {
    return localQueues;
  }

  /** The observers of every lock of the client. */
  public StandardListenerManager<LockObserver> observers() {
    return observers;
  }

  /**
   * The object kept for this client under {@code key}, made by {@code make} the first time it is
   * asked for: what the client's lock objects share beyond the engine (a place for local handoff).
   */
  public <T> T shared(String key, Class<T> type, Function<String, T> make) {
    return type.cast(shared.computeIfAbsent(key, make));
  }

  /** How many objects the client's lock objects share now (places for local handoff, helpers). */
  public int sharedCount() {
    return shared.size();
  }

  /**
   * As {@link #shared}, and runs {@code join} on the object under {@code key}'s lock, so that a
   * concurrent {@link #updateShared} on the key sees the join or none of it (a lock object opening
   * on a place that is being dropped).
   */
  public <T> T joinShared(String key, Class<T> type, Function<String, T> make, Consumer<T> join) {
    return type.cast(
        shared.compute(
            key,
            (k, current) -> {
              T value = current == null ? make.apply(k) : type.cast(current);
              join.accept(value);
              return value;
            }));
  }

  /**
   * Runs {@code change} on the object {@code value}, if it is still the one under {@code key},
   * under the key's lock; drops it from the client's shared objects if {@code change} says it is
   * not needed any more.
   *
   * @param change returns whether the object stays shared
   */
  public <T> void updateShared(String key, T value, Predicate<T> change) {
    var unused =
        shared.computeIfPresent(
            key, (k, current) -> current != value || change.test(value) ? current : null);
  }
}

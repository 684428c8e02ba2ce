package io.lockstep.recipes.micrometer;

import io.lockstep.recipes.internal.engine.CallerContext;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockAttempt;
import io.lockstep.recipes.locks.LockObserver;
import io.lockstep.recipes.locks.LockObservers;
import io.lockstep.recipes.locks.LockState;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;

/**
 * Micrometer Observations of every lock made with one Curator client: one for each wait to acquire
 * and one for each hold, so that a trace shows how long a request waited for a lock and how long it
 * held it, and metrics handlers time both.
 *
 * <pre>{@code
 * import io.lockstep.recipes.micrometer.LockstepObservations;
 * import io.micrometer.observation.ObservationRegistry;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * CuratorFramework client = ...; // a started client
 * ObservationRegistry observationRegistry = ...; // your application's registry
 * LockstepObservations observations = LockstepObservations.bind(client, observationRegistry);
 * }</pre>
 *
 * <p><b>Observations.</b> Every lock of the client, its namespace facades included, for the
 * attempts that start after binding:
 *
 * <table>
 *   <caption>The observations</caption>
 *   <tr><th>Name</th><th>Contextual name</th><th>From, to</th><th>Low-cardinality keys</th>
 *       <th>High-cardinality keys</th><th>Events</th></tr>
 *   <tr><td>{@value #ACQUIRE}</td><td><i>recipe</i> {@code wait}</td>
 *       <td>the start of an attempt to acquire, its end (granted or not)</td>
 *       <td>{@code recipe}, {@code outcome}</td><td>{@code path}, {@code token} (if granted)</td>
 *       <td>none</td></tr>
 *   <tr><td>{@value #HOLD}</td><td><i>recipe</i> {@code hold}</td>
 *       <td>the grant, the release (or the loss)</td><td>{@code recipe}, {@code state}</td>
 *       <td>{@code path}, {@code token}</td>
 *       <td>{@value #AT_RISK_EVENT}, {@value #HELD_EVENT}, {@value #LOST_EVENT}</td></tr>
 * </table>
 *
 * <p>{@code recipe} is {@code ReentrantMutex}, {@code NonReentrantMutex}, {@code
 * ReadWriteMutex.ReadLock}, {@code ReadWriteMutex.WriteLock}, {@code MultiMutex}, {@code
 * CountingSemaphore} (an attempt per lease) or {@code SemaphoreMutex}; {@code outcome} an {@link
 * AcquireOutcome} ({@code GRANTED}, {@code TIMED_OUT}, {@code WITHDRAWN}, {@code UNREACHABLE},
 * {@code FAILED}), or {@value #UNKNOWN} for an attempt still waiting when this was closed; {@code
 * state} is {@code RELEASED}, {@code LOST}, or the state a hold still held at close was in ({@code
 * HELD} or {@code AT_RISK}). {@code path} is the lock's path (a multi-lock's paths in brackets),
 * {@code token} the hold's fencing token (absent for a hold with local handoff, or a reader that
 * joined a shared read node, that has not taken one; one it takes while held is added at its
 * release, or at its loss). A reentrant acquire is no attempt and is not observed. The contextual
 * name, which tracers take as the span's name, names the recipe but not the path: span names should
 * be of low cardinality, and the path is the span's {@code path} attribute (an {@link
 * io.micrometer.observation.ObservationFilter} can put it in the name: {@code docs/tracing.md}). An
 * attempt that fails ({@code FAILED}, {@code UNREACHABLE}) is told by its {@code outcome} only:
 * {@link LockObserver} hands over no exception, so the observation carries no error.
 *
 * <p><b>Parents.</b> An attempt starts in the thread that acquires, for the handle form ({@code
 * hold}) and the asynchronous one ({@code acquireAsync}) too: the observation current there ({@link
 * ObservationRegistry#getCurrentObservation()}, such as the request's) is the parent of the wait,
 * and of the hold as well. The hold is the wait's sibling rather than its child: it begins when the
 * wait ends, and a child that starts after its parent ended would be drawn outside it; side by side
 * under the request they read as the timeline they are. Without a current observation the hold's
 * parent is the wait, so both stay in one trace (the wait's, which a tracer may have taken from its
 * own current span), or none if a predicate turns the waits off. The same holds for every form: the
 * {@code Lock} view, a local handoff (under the waiting caller's observation, not the releasing
 * one's), and a composed {@code MultiMutex}, whose locks are each observed as themselves; its
 * {@code acquireAsync} starts each lock after the one before it is granted, on Lockstep's threads,
 * and carries the caller's observation there; so does a {@code CountingSemaphore} request for
 * several leases, or one that queues, to the leases it starts after the first.
 *
 * <p><b>Threads, failures, cost.</b> A {@link LockObserver} registered with {@link
 * LockObservers#of(CuratorFramework)} starts the wait in the acquiring thread; it ends the wait and
 * starts, marks and stops the hold on Lockstep's threads, never on ZooKeeper's event thread, and
 * opens no scope anywhere. The hold's observation starts before the acquiring caller wakes, and
 * stops before {@code release()} returns (the releasing thread waits for observers). A failing
 * handler is logged by the observer point and costs the lock nothing; an observation it failed to
 * start or stop is still stopped when it ends, for the handlers that did start it. An {@link
 * io.micrometer.observation.ObservationPredicate} may turn the waits or the holds off alone.
 * Nothing is registered with the client until {@link #bind}; a bound client sends the same requests
 * to ZooKeeper.
 *
 * <p><b>Limits.</b> The observations cover one client: bind once per client. {@link #close()}
 * unregisters the observer and stops the observations still under way.
 */
public final class LockstepObservations implements AutoCloseable {
  /** The observation of a wait to acquire: {@value}. */
  public static final String ACQUIRE = "lockstep.acquire";

  /** The observation of a hold: {@value}. */
  public static final String HOLD = "lockstep.hold";

  /** The event of a hold put at risk (the connection suspended): {@value}. */
  public static final String AT_RISK_EVENT = "at.risk";

  /** The event of a hold held again after being at risk (reconnected, still ours): {@value}. */
  public static final String HELD_EVENT = "held";

  /** The event of a hold lost (session expired, node deleted, client closed): {@value}. */
  public static final String LOST_EVENT = "lost";

  /** The {@code outcome} of a wait still under way when the observations were closed: {@value}. */
  public static final String UNKNOWN = "UNKNOWN";

  private static final String RECIPE = "recipe";
  private static final String OUTCOME = "outcome";
  private static final String STATE = "state";
  private static final String PATH = "path";
  private static final String TOKEN = "token";

  private static final Observation.Event AT_RISK =
      Observation.Event.of(AT_RISK_EVENT, "lock at risk");
  private static final Observation.Event HELD_AGAIN =
      Observation.Event.of(HELD_EVENT, "lock held again");
  private static final Observation.Event LOST = Observation.Event.of(LOST_EVENT, "lock lost");

  private final CuratorFramework client;
  private final ObservationRegistry registry;
  private final Observer observer = new Observer();
  // The observation current in the caller's thread, for a form that starts attempts later on
  // another thread (a composed multi-lock's asynchronous acquire) to carry to them.
  private final CallerContext.Source callers = this::currentObservation;
  private final AtomicBoolean closed = new AtomicBoolean(); // terminal: nothing observed after

  /**
   * The waits under way, by attempt id. Whoever removes an entry stops its observation: the
   * attempt's end, or {@link #close()}; so each is stopped once.
   */
  private final Map<Long, Wait> waits = new ConcurrentHashMap<>();

  /** The holds under way, by attempt id; as {@link #waits}: the remover stops the observation. */
  private final Map<Long, Hold> holds = new ConcurrentHashMap<>();

  /** A wait's observation, and the parent its hold will have. */
  private static final class Wait {
    final Observation observation;
    final Observation parent; // the caller's current observation, or null

    Wait(Observation observation, Observation parent) {
      this.observation = observation;
      this.parent = parent;
    }
  }

  /** A hold's observation and its latest state. */
  private static final class Hold {
    final Observation observation;
    volatile boolean tokenKnown; // the grant, or a notice since, carried a token
    volatile LockState state = LockState.HELD; // written in order by the attempt's notices

    Hold(Observation observation, boolean tokenKnown) {
      this.observation = observation;
      this.tokenKnown = tokenKnown;
    }

    /**
     * Tags the token of a local handoff's hold, taken while held, when a notice first carries it (a
     * change of state, the loss, the release); the attempt's notices come one at a time.
     */
    void learnToken(long fencingToken) {
      if (!tokenKnown && fencingToken != 0) {
        observation.highCardinalityKeyValue(TOKEN, Long.toString(fencingToken));
        tokenKnown = true;
      }
    }
  }

  private LockstepObservations(CuratorFramework client, ObservationRegistry registry) {
    this.client = client;
    this.registry = registry;
  }

  /**
   * Observes every lock made with {@code client} in {@code registry}, from now on, until closed.
   *
   * @param client a Curator client
   * @param registry the observation registry (the application's, whose handlers trace and time)
   * @return the binding, to close when the client's locks should no longer be observed
   * @throws NullPointerException if {@code client} or {@code registry} is null
   */
  public static LockstepObservations bind(CuratorFramework client, ObservationRegistry registry) {
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(registry, "registry");
    LockstepObservations observations = new LockstepObservations(client, registry);
    CallerContext.register(observations.callers);
    LockObservers.of(client).addListener(observations.observer);
    return observations;
  }

  private Observation currentObservation() {
    return registry.getCurrentObservation();
  }

  /**
   * Stops observing the client's locks: unregisters the observer, stops the waits still under way
   * (with {@code outcome} {@value #UNKNOWN}) and the holds still held (with their current {@code
   * state}). Closing again does nothing.
   *
   * @throws RuntimeException what a handler threw while one of them was stopped (the others are
   *     stopped all the same; later failures are suppressed in it)
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    LockObservers.of(client).removeListener(observer);
    CallerContext.unregister(callers);
    RuntimeException failure = sweep(waits, LockstepObservations::stopUnfinished, null);
    failure = sweep(holds, hold -> stop(hold, hold.state), failure);
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * Removes and stops every entry of {@code map}, each even if a handler failed to stop another;
   * returns {@code failure}, or else the first such failure, with the later ones suppressed.
   */
  private static <T> RuntimeException sweep(
      Map<Long, T> map, Consumer<T> stopper, RuntimeException failure) {
    for (Long id : map.keySet()) {
      T value = map.remove(id);
      if (value == null) {
        continue;
      }
      try {
        stopper.accept(value);
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    return failure;
  }

  /**
   * Adds {@code value} under {@code id}; if this closed meanwhile and the sweep of {@link #close()}
   * may have missed it, takes it back and stops it. Either this or the sweep removes it, never
   * both.
   */
  private <T> void track(Map<Long, T> map, long id, T value, Consumer<T> stopper) {
    map.put(id, value);
    if (closed.get() && map.remove(id, value)) {
      stopper.accept(value);
    }
  }

  private static void stopUnfinished(Wait wait) {
    wait.observation.lowCardinalityKeyValue(OUTCOME, UNKNOWN);
    wait.observation.stop();
  }

  private static void stop(Hold hold, LockState state) {
    hold.observation.lowCardinalityKeyValue(STATE, state.name());
    hold.observation.stop();
  }

  /** Turns callbacks into observations. */
  private final class Observer implements LockObserver {
    @Override
    public void attemptStarted(LockAttempt attempt) {
      if (closed.get() || registry.isNoop()) {
        return; // nothing would record the wait nor the hold: keep no entry
      }
      // The caller's: this is its thread, or one that carries what was current there.
      Observation parent =
          CallerContext.carried(callers) instanceof Observation carried
              ? carried
              : registry.getCurrentObservation();
      Observation wait = notStarted(ACQUIRE, " wait", attempt, parent);
      // Kept even when a predicate turns the waits off (a no-op wait): the hold needs its parent.
      Wait entry = new Wait(wait, parent);
      try {
        wait.start();
      } finally { // a handler that threw began it for the handlers before it: stop it all the same
        track(waits, attempt.id(), entry, LockstepObservations::stopUnfinished);
      }
    }

    @Override
    public void attemptEnded(
        LockAttempt attempt, AcquireOutcome outcome, Duration waited, long fencingToken) {
      Wait wait = waits.remove(attempt.id());
      if (wait == null) {
        return; // started before binding or unrecorded, or stopped by close()
      }
      try {
        wait.observation.lowCardinalityKeyValue(OUTCOME, outcome.name());
        if (fencingToken != 0) {
          wait.observation.highCardinalityKeyValue(TOKEN, Long.toString(fencingToken));
        }
        wait.observation.stop();
      } finally { // a handler failing the wait's stop does not cost the hold its observation
        if (outcome == AcquireOutcome.GRANTED && !closed.get()) {
          startHold(attempt, wait, fencingToken);
        }
      }
    }

    private void startHold(LockAttempt attempt, Wait wait, long fencingToken) {
      Observation parent = wait.parent;
      if (parent == null && !wait.observation.isNoop()) {
        parent = wait.observation;
      }
      Observation hold = notStarted(HOLD, " hold", attempt, parent);
      if (hold.isNoop()) {
        return; // turned off by a predicate: keep no entry
      }
      if (fencingToken != 0) {
        hold.highCardinalityKeyValue(TOKEN, Long.toString(fencingToken));
      }
      Hold entry = new Hold(hold, fencingToken != 0);
      try {
        hold.start();
      } finally { // as the wait's: begun for the handlers before one that threw, so stopped too
        track(holds, attempt.id(), entry, h -> stop(h, LockState.HELD));
      }
    }

    /** An observation {@code name} of {@code attempt}, named for its recipe and {@code kind}. */
    private Observation notStarted(
        String name, String kind, LockAttempt attempt, Observation parent) {
      return Observation.createNotStarted(name, registry)
          .parentObservation(parent)
          .contextualName(attempt.recipe() + kind)
          .lowCardinalityKeyValue(RECIPE, attempt.recipe())
          .highCardinalityKeyValue(PATH, attempt.path());
    }

    @Override
    public void stateChanged(LockAttempt attempt, LockState state, long fencingToken) {
      Hold hold = holds.get(attempt.id());
      if (hold == null) {
        return;
      }
      hold.state = state;
      hold.learnToken(fencingToken); // a hold lost before its release stops at the loss
      switch (state) {
        case AT_RISK -> hold.observation.event(AT_RISK);
        case HELD -> hold.observation.event(HELD_AGAIN);
        case LOST -> {
          hold.observation.event(LOST);
          if (holds.remove(attempt.id(), hold)) { // the lock is no longer held: the hold ends
            stop(hold, LockState.LOST);
          }
        }
        default -> {}
      }
    }

    @Override
    public void released(LockAttempt attempt, Duration held, long fencingToken) {
      Hold hold = holds.remove(attempt.id());
      if (hold == null) {
        return; // lost before, or not observed
      }
      hold.learnToken(fencingToken);
      stop(hold, LockState.RELEASED);
    }
  }

  @Override
  public String toString() {
    return "LockstepObservations[" + client + (closed.get() ? ", closed" : "") + "]";
  }
}

package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.zk.ZkRequests;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockAttempt;
import io.lockstep.recipes.locks.LockObserver;
import io.lockstep.recipes.locks.LockState;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one attempt tells observers and the Flight Recorder: its start, how it ended, the state
 * changes and the release of its hold. Costs nothing measurable when no {@link LockObserver} is
 * registered and no recording is on: a check per step. An unobserved lock (a place shared by local
 * holds) tells nobody: its members are the attempts. An attempt may carry on an earlier one's
 * telemetry ({@link Observation}): then observers hear one start and one ending for both.
 */
final class Telemetry {
  private static final Logger log = LoggerFactory.getLogger(Telemetry.class);
  private static final AtomicLong ids = new AtomicLong();
  private static final boolean JFR = jfrAvailable();

  /** What {@link #released} returns when nobody is to hear of it: heard already. Never written. */
  static final CompletableFuture<Void> HEARD = CompletableFuture.completedFuture(null);

  private static final AtomicIntegerFieldUpdater<Telemetry> TOLD =
      AtomicIntegerFieldUpdater.newUpdater(Telemetry.class, "told");
  private static final AtomicReferenceFieldUpdater<Telemetry, LockAttempt> ATTEMPT =
      AtomicReferenceFieldUpdater.newUpdater(Telemetry.class, LockAttempt.class, "attempt");

  private final LockSettings settings;
  private final Lifecycle lifecycle; // the attempt's, whose notifier delivers to observers
  private final long id; // the acquisition's, for observers
  private final boolean recorded;
  private final long startNanos;
  private final JfrEvents.Acquire acquireEvent; // null when no recording wants it
  private final Telemetry first; // the telemetry of the acquisition this carries on, or this

  // What observers and events know the acquisition as: made when one of them first needs it (with
  // no observer and no recording, never), then the same for every telemetry carrying it on.
  private volatile LockAttempt attempt;

  @SuppressWarnings("unused") // through TOLD
  private volatile int told; // 1 once the ending (a grant, or not) was told; read on `first`

  private volatile boolean grantTold; // the grant was told: its release will be
  private volatile long grantedNanos;
  private volatile JfrEvents.HeldSpan holdEvent;

  /**
   * The telemetry of an attempt that began at {@code startNanos}: made as it begins ({@code
   * atStart}: its acquire event begins too), or when someone first hears of it ({@link Lifecycle}),
   * then after a grant nobody heard of if {@code unheardGrant}, at {@code grantedNanos}.
   */
  Telemetry(
      LockSettings settings,
      Lifecycle lifecycle,
      long startNanos,
      boolean atStart,
      boolean unheardGrant,
      long grantedNanos) {
    this.settings = settings;
    this.lifecycle = lifecycle;
    this.id = ids.incrementAndGet();
    this.recorded = JFR && settings.observed();
    this.startNanos = startNanos;
    this.acquireEvent = recorded && atStart ? JfrEvents.beginAcquire() : null;
    this.first = this;
    if (unheardGrant) {
      told = 1; // the grant was told, to nobody
      grantTold = true;
      this.grantedNanos = grantedNanos;
    }
  }

  /**
   * Whether anyone would hear of an attempt of {@code settings}' lock now: an observer, or a
   * recording of Lockstep's events. Nobody hears of an unobserved lock (a place's): its members are
   * the attempts.
   */
  static boolean wanted(LockSettings settings) {
    return settings.observed() && (settings.hasObservers() || (JFR && JfrEvents.enabled()));
  }

  /**
   * Registers Lockstep's Flight Recorder events now, as a client's engine is made: the first
   * registration in a JVM starts the recorder's metadata, a few hundred milliseconds on a cold JVM,
   * which the first timed acquire must not spend out of its budget.
   */
  static void prepare() {
    if (JFR) {
      JfrEvents.enabled();
    }
  }

  /** Carries on {@code earlier}'s acquisition, through the notifier of the attempt carrying it. */
  private Telemetry(Telemetry earlier, Lifecycle lifecycle) {
    this.settings = earlier.settings;
    this.lifecycle = lifecycle;
    this.id = earlier.id;
    this.recorded = earlier.recorded;
    this.startNanos = earlier.startNanos;
    this.acquireEvent = earlier.acquireEvent;
    this.first = earlier.first;
  }

  /** The acquisition as observers and events know it, one object for all who carry it on. */
  private LockAttempt attempt() {
    LockAttempt made = first.attempt;
    if (made == null) {
      made = new LockAttempt(id, settings.description(), settings.recipe());
      if (!ATTEMPT.compareAndSet(first, null, made)) {
        made = first.attempt;
      }
    }
    return made;
  }

  /** Marks the ending told; false if it was told already (by this or a carrying telemetry). */
  private boolean tellEnding() {
    return TOLD.compareAndSet(first, 0, 1);
  }

  /** The telemetry of an attempt carrying on this one's acquisition: {@code carrier}'s. */
  Telemetry carriedOn(Lifecycle carrier) {
    return new Telemetry(this, carrier);
  }

  /**
   * In the acquiring thread, before the attempt sends anything; nothing for a carried one. An
   * attempt started on ZooKeeper's event thread (a semaphore's next lease, started when the last
   * verdict was heard there) queues it for the notifier's thread instead, ahead of its other
   * notices, with the caller's context the event thread carries ({@link CallerContext}): observers
   * never run on the event thread.
   */
  void started() {
    if (first == this && settings.hasObservers()) {
      LockAttempt attempt = attempt();
      Runnable notice = notice(observer -> observer.attemptStarted(attempt));
      if (ZkRequests.onEventThread()) {
        lifecycle.notifier().submit(CallerContext.carryingHere(notice));
      } else {
        lifecycle.notifier().deliverNow(notice);
      }
    }
  }

  /** Queued before the caller wakes, so observers hear the grant first. */
  void granted(long fencingToken) {
    if (!tellEnding()) {
      return; // the acquisition ended as the request that carried it did
    }
    grantTold = true;
    long now = settings.now();
    grantedNanos = now;
    if (recorded) {
      JfrEvents.endAcquire(
          acquireEvent,
          settings.description(),
          settings.recipe(),
          AcquireOutcome.GRANTED,
          fencingToken);
      holdEvent = JfrEvents.beginHold();
    }
    if (settings.hasObservers()) {
      LockAttempt attempt = attempt();
      Duration waited = Duration.ofNanos(now - startNanos);
      observe(
          observer -> observer.attemptEnded(attempt, AcquireOutcome.GRANTED, waited, fencingToken));
    }
  }

  /** How the acquisition ended without a grant; told once, whichever attempt carries it. */
  void ended(AcquireOutcome outcome) {
    if (!tellEnding()) {
      return;
    }
    if (recorded) {
      JfrEvents.endAcquire(acquireEvent, settings.description(), settings.recipe(), outcome, 0);
    }
    if (settings.hasObservers()) {
      LockAttempt attempt = attempt();
      Duration waited = Duration.ofNanos(settings.now() - startNanos);
      observe(observer -> observer.attemptEnded(attempt, outcome, waited, 0));
    }
  }

  void stateChanged(LockState state, long fencingToken) {
    if (recorded) {
      JfrEvents.stateChanged(settings.description(), state);
    }
    if (settings.hasObservers()) {
      LockAttempt attempt = attempt();
      observe(observer -> observer.stateChanged(attempt, state, fencingToken));
    }
  }

  /** Queued after the notices before it; the future completes once observers heard it. */
  CompletableFuture<Void> released(long fencingToken) {
    if (!grantTold) {
      return HEARD; // a grant nobody heard of
    }
    if (recorded) {
      JfrEvents.endHold(holdEvent, settings.description(), fencingToken);
    }
    if (!settings.hasObservers()) {
      return HEARD;
    }
    LockAttempt attempt = attempt();
    Duration held = Duration.ofNanos(settings.now() - grantedNanos);
    return lifecycle
        .notifier()
        .submitTracked(notice(observer -> observer.released(attempt, held, fencingToken)));
  }

  private void observe(Consumer<LockObserver> call) {
    if (settings.hasObservers()) {
      lifecycle.notifier().submit(notice(call));
    }
  }

  private Runnable notice(Consumer<LockObserver> call) {
    return () -> {
      settings.engine().observers().forEach(call);
      settings.tellObservers(call);
    };
  }

  private static boolean jfrAvailable() {
    try {
      Class.forName("jdk.jfr.Event", false, Telemetry.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      log.debug("No jdk.jfr module: Lockstep's Flight Recorder events are off");
      return false;
    }
    if (!jdk.jfr.FlightRecorder.isAvailable()) { // a VM without the recorder: events would throw
      log.debug("No Flight Recorder in this JVM: Lockstep's Flight Recorder events are off");
      return false;
    }
    return true;
  }
}

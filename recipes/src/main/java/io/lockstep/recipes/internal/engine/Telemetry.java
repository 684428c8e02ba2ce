package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockAttempt;
import io.lockstep.recipes.locks.LockObserver;
import io.lockstep.recipes.locks.LockState;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
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

  private final LockSettings settings;
  private final Notifier notifier;
  private final LockAttempt attempt;
  private final boolean recorded;
  private final long startNanos;
  private final JfrEvents.Acquire acquireEvent; // null when no recording wants it
  private final boolean carried; // carries on an earlier attempt's: its start was told
  private final AtomicBoolean told; // the ending (a grant, or not) was told; shared when carried
  private volatile boolean grantTold; // the grant was told: its release will be
  private volatile long grantedNanos;
  private volatile JfrEvents.HeldSpan holdEvent;

  Telemetry(LockSettings settings, Notifier notifier) {
    this.settings = settings;
    this.notifier = notifier;
    this.attempt =
        new LockAttempt(ids.incrementAndGet(), settings.description(), settings.recipe());
    this.recorded = JFR && settings.observed();
    this.startNanos = settings.now();
    this.acquireEvent = recorded ? JfrEvents.beginAcquire() : null;
    this.carried = false;
    this.told = new AtomicBoolean();
  }

  /** Carries on {@code earlier}'s acquisition, through the notifier of the attempt carrying it. */
  private Telemetry(Telemetry earlier, Notifier notifier) {
    this.settings = earlier.settings;
    this.notifier = notifier;
    this.attempt = earlier.attempt;
    this.recorded = earlier.recorded;
    this.startNanos = earlier.startNanos;
    this.acquireEvent = earlier.acquireEvent;
    this.carried = true;
    this.told = earlier.told;
  }

  /** The telemetry of an attempt carrying on this one's acquisition, delivering on {@code n}. */
  Telemetry carriedOn(Notifier n) {
    return new Telemetry(this, n);
  }

  /** In the acquiring thread, before the attempt sends anything; nothing for a carried one. */
  void started() {
    if (!carried && settings.hasObservers()) {
      notifier.deliverNow(notice(observer -> observer.attemptStarted(attempt)));
    }
  }

  /** Queued before the caller wakes, so observers hear the grant first. */
  void granted(long fencingToken) {
    if (!told.compareAndSet(false, true)) {
      return; // the acquisition ended as the request that carried it did
    }
    grantTold = true;
    long now = settings.now();
    grantedNanos = now;
    if (recorded) {
      JfrEvents.endAcquire(acquireEvent, attempt, AcquireOutcome.GRANTED, fencingToken);
      holdEvent = JfrEvents.beginHold();
    }
    Duration waited = Duration.ofNanos(now - startNanos);
    observe(
        observer -> observer.attemptEnded(attempt, AcquireOutcome.GRANTED, waited, fencingToken));
  }

  /** How the acquisition ended without a grant; told once, whichever attempt carries it. */
  void ended(AcquireOutcome outcome) {
    if (!told.compareAndSet(false, true)) {
      return;
    }
    if (recorded) {
      JfrEvents.endAcquire(acquireEvent, attempt, outcome, 0);
    }
    Duration waited = Duration.ofNanos(settings.now() - startNanos);
    observe(observer -> observer.attemptEnded(attempt, outcome, waited, 0));
  }

  void stateChanged(LockState state, long fencingToken) {
    if (recorded) {
      JfrEvents.stateChanged(attempt, state);
    }
    observe(observer -> observer.stateChanged(attempt, state, fencingToken));
  }

  /** Queued after the notices before it; the future completes once observers heard it. */
  CompletableFuture<Void> released(long fencingToken) {
    if (!grantTold) {
      return CompletableFuture.completedFuture(null); // a grant nobody heard of
    }
    if (recorded) {
      JfrEvents.endHold(holdEvent, attempt, fencingToken);
    }
    Duration held = Duration.ofNanos(settings.now() - grantedNanos);
    if (!settings.hasObservers()) {
      return CompletableFuture.completedFuture(null);
    }
    return notifier.submitTracked(
        notice(observer -> observer.released(attempt, held, fencingToken)));
  }

  private void observe(Consumer<LockObserver> call) {
    if (settings.hasObservers()) {
      notifier.submit(notice(call));
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
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      log.debug("No jdk.jfr module: Lockstep's Flight Recorder events are off");
      return false;
    }
  }
}

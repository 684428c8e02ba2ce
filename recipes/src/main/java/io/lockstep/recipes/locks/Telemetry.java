package io.lockstep.recipes.locks;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one acquisition tells observers and the Flight Recorder: its start, how it ended, the state
 * changes and the release of its hold. Costs nothing measurable when no {@link LockObserver} is
 * registered and no recording is on: a check per step.
 */
final class Telemetry {
  private static final Logger log = LoggerFactory.getLogger(Telemetry.class);
  private static final AtomicLong ids = new AtomicLong();
  private static final boolean JFR = jfrAvailable();

  private final LockContext context;
  private final ClientEvents clientEvents;
  private final Notifier notifier;
  private final LockAttempt attempt;
  private final long startNanos;
  private final JfrEvents.Acquire acquireEvent; // null when no recording wants it
  private volatile long grantedNanos;
  private volatile JfrEvents.Hold holdEvent;

  Telemetry(LockContext context, ClientEvents clientEvents, Notifier notifier) {
    this.context = context;
    this.clientEvents = clientEvents;
    this.notifier = notifier;
    this.attempt = new LockAttempt(ids.incrementAndGet(), context.description(), context.recipe());
    this.startNanos = context.retries().now();
    this.acquireEvent = JFR ? JfrEvents.beginAcquire() : null;
  }

  /** In the acquiring thread. */
  void started() {
    observe(observer -> observer.attemptStarted(attempt), true);
  }

  /** Queued before the caller wakes, so observers hear the grant first. */
  void granted(long fencingToken) {
    long now = context.retries().now();
    grantedNanos = now;
    if (JFR) {
      JfrEvents.endAcquire(acquireEvent, attempt, AcquireOutcome.GRANTED, fencingToken);
      holdEvent = JfrEvents.beginHold();
    }
    Duration waited = Duration.ofNanos(now - startNanos);
    observe(
        observer -> observer.attemptEnded(attempt, AcquireOutcome.GRANTED, waited, fencingToken),
        false);
  }

  void ended(AcquireOutcome outcome) {
    if (JFR) {
      JfrEvents.endAcquire(acquireEvent, attempt, outcome, 0);
    }
    Duration waited = Duration.ofNanos(context.retries().now() - startNanos);
    observe(observer -> observer.attemptEnded(attempt, outcome, waited, 0), false);
  }

  void stateChanged(LockState state, long fencingToken) {
    if (JFR) {
      JfrEvents.stateChanged(attempt, state);
    }
    observe(observer -> observer.stateChanged(attempt, state, fencingToken), false);
  }

  /** In the releasing thread, after the notices queued before it. */
  void released(long fencingToken) {
    if (JFR) {
      JfrEvents.endHold(holdEvent, attempt, fencingToken);
    }
    Duration held = Duration.ofNanos(context.retries().now() - grantedNanos);
    observe(observer -> observer.released(attempt, held, fencingToken), true);
  }

  private void observe(Consumer<LockObserver> call, boolean inThisThread) {
    if (!clientEvents.hasObservers() && !context.hasObservers()) {
      return;
    }
    Runnable notice =
        () -> {
          clientEvents.observers().forEach(call);
          context.observers().forEach(call);
        };
    if (inThisThread) {
      notifier.deliverNow(notice);
    } else {
      notifier.submit(notice);
    }
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

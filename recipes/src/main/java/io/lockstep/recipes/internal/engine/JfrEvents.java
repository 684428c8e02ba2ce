package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockState;
import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.EventType;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * Lockstep's JDK Flight Recorder events. Off unless a recording enables them; then an acquire is
 * one event whose duration is the wait (a semaphore request one, however many attempts it makes:
 * see {@link Observation}), a hold one whose duration is the time held, and each state change of a
 * hold an instant event. Loaded only when the runtime has the {@code jdk.jfr} module (see {@link
 * Telemetry}).
 */
final class JfrEvents {
  private JfrEvents() {}

  /** An acquire: begun when the attempt starts, committed when it ends. */
  @Name("io.lockstep.LockAcquire")
  @Label("Lock Acquire")
  @Category("Lockstep")
  @Description("One attempt to acquire a lock; its duration is the time waited")
  static final class Acquire extends Event {
    @Label("Path")
    String path;

    @Label("Recipe")
    String recipe;

    @Label("Outcome")
    String outcome;

    @Label("Fencing Token")
    long fencingToken;
  }

  /** A hold: begun at the grant, committed at the release. */
  @Name("io.lockstep.LockHold")
  @Label("Lock Hold")
  @Category("Lockstep")
  @Description("One hold of a lock; its duration is the time held")
  static final class HeldSpan extends Event {
    @Label("Path")
    String path;

    @Label("Fencing Token")
    long fencingToken;
  }

  /** A state change of a hold. */
  @Name("io.lockstep.LockStateChange")
  @Label("Lock State Change")
  @Category("Lockstep")
  @Description("A hold of a lock changed state: AT_RISK, HELD again, LOST")
  static final class StateChange extends Event {
    @Label("Path")
    String path;

    @Label("State")
    String state;
  }

  private static final EventType ACQUIRE = EventType.getEventType(Acquire.class);
  private static final EventType HOLD = EventType.getEventType(HeldSpan.class);
  private static final EventType STATE_CHANGE = EventType.getEventType(StateChange.class);

  /** Whether a recording wants any of these events now. */
  static boolean enabled() {
    return ACQUIRE.isEnabled() || HOLD.isEnabled() || STATE_CHANGE.isEnabled();
  }

  /** An acquire event, begun now; null when no recording wants it. */
  static Acquire beginAcquire() {
    return begun(new Acquire());
  }

  static void endAcquire(
      Acquire event, String path, String recipe, AcquireOutcome outcome, long fencingToken) {
    if (event != null && event.shouldCommit()) {
      event.path = path;
      event.recipe = recipe;
      event.outcome = outcome.name();
      event.fencingToken = fencingToken;
      event.commit();
    }
  }

  /** A hold event, begun now; null when no recording wants it. */
  static HeldSpan beginHold() {
    return begun(new HeldSpan());
  }

  /** {@code event}, begun now; null when no recording wants it. */
  private static <E extends Event> E begun(E event) {
    if (!event.isEnabled()) {
      return null;
    }
    event.begin();
    return event;
  }

  static void endHold(HeldSpan event, String path, long fencingToken) {
    if (event != null && event.shouldCommit()) {
      event.path = path;
      event.fencingToken = fencingToken;
      event.commit();
    }
  }

  static void stateChanged(String path, LockState state) {
    StateChange event = new StateChange();
    if (event.shouldCommit()) {
      event.path = path;
      event.state = state.name();
      event.commit();
    }
  }
}

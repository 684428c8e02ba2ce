package io.lockstep.recipes.internal.local;

import java.util.List;
import java.util.function.LongSupplier;

/**
 * When a place nobody local holds or waits for goes back (lock caching): the deadline of the
 * current linger and the timer armed for it, and the pause after another participant was seen.
 * Owned by a {@link PlaceState}, used only under its lock; the place's phase says whether it
 * lingers.
 *
 * <p>The pause (adaptive linger): a place kept while another process alternates with this one costs
 * that process a notification and a delete at every turn. So when another participant is seen (a
 * granting read not alone, a change of the queue heard, a read at the bound not alone, our attempt
 * queued behind someone), the place is not kept for a while: the first time for the linger itself,
 * then twice as long at each sighting within the pause under way, up to {@value #MAX_DOUBLINGS}
 * doublings; a sighting after a pause ran out starts again from the linger. While the pause lasts
 * the last release gives the place back, as without linger. A process alone sees nobody and always
 * keeps it.
 */
final class Linger {
  /** The longest pause is the linger times 2 to this power. */
  static final int MAX_DOUBLINGS = 6;

  private long until; // LINGERING: when the place goes back, on the place's clock
  private long timerDue; // when the timer armed last fires, on the place's clock
  private boolean timerOut; // the timer armed last has not fired yet
  private final LongSupplier clock; // nanoseconds: the place's clock
  private long unit; // the linger of the member that joined last with one: the pause's unit
  private boolean seen; // another participant was seen once at least
  private long seenAt; // seen: when another participant was seen last
  private int doublings; // seen: the pause from seenAt is its base times 2 to this power
  private long base; // seen: the unit when the pause began

  Linger(LongSupplier clock) {
    this.clock = clock;
  }

  /** A member joined that keeps the place for {@code lingerNanos} (0: it does not linger). */
  void joined(long lingerNanos) {
    if (lingerNanos > 0) {
      unit = lingerNanos;
    }
  }

  /** Another participant was seen now: a pause begins, longer if one was under way. */
  void sawOthers() {
    if (unit == 0) {
      return; // nobody here lingers
    }
    long now = clock.getAsLong();
    if (seen && base == unit && now - seenAt < pause()) {
      doublings = Math.min(doublings + 1, MAX_DOUBLINGS);
    } else {
      doublings = 0;
    }
    seen = true;
    seenAt = now;
    base = unit;
  }

  /** Whether a place may be kept now: no pause under way. */
  boolean mayKeep() {
    return !seen || clock.getAsLong() - seenAt >= pause();
  }

  private long pause() {
    return base << doublings; // base is at most a day: no overflow at 2^6
  }

  /** A new place is being taken: the last place's timer, if any, finds it gone. */
  void reset() {
    timerOut = false;
  }

  /**
   * The place named {@code place} lingers from now for {@code lingerNanos}: a timer is armed for
   * its end, unless the one armed already comes in time.
   */
  void start(int place, long lingerNanos, List<PlaceStep> steps) {
    long now = clock.getAsLong();
    until = now + lingerNanos;
    if (!timerOut || timerDue - until > 0) {
      arm(place, now, lingerNanos, steps);
    }
  }

  /**
   * The timer of {@code due} fired (an earlier one may fire after a later was armed) while the
   * place named {@code place} lingers or not: whether it must go back now, lingering and its linger
   * run out. One kept again since the timer was armed has a timer armed for the rest, unless one is
   * out; one held again arms its timer at its next linger; a timer of a place given back finds
   * nothing to do.
   */
  boolean runsOut(PlaceEvent.LingerDue due, int place, boolean lingering, List<PlaceStep> steps) {
    if (due.place() != place) {
      return false; // a timer of a place given back
    }
    if (due.due() == timerDue) {
      timerOut = false;
    }
    if (!lingering) {
      return false;
    }
    long now = clock.getAsLong();
    if (now - until >= 0) {
      return true;
    }
    if (!timerOut) {
      arm(place, now, until - now, steps);
    }
    return false;
  }

  private void arm(int place, long now, long delayNanos, List<PlaceStep> steps) {
    timerOut = true;
    timerDue = now + delayNanos;
    steps.add(new PlaceStep.LingerTimer(place, timerDue, delayNanos));
  }
}

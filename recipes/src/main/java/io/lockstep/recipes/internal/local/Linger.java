package io.lockstep.recipes.internal.local;

/**
 * When a place nobody local holds or waits for goes back (lock caching): the deadline of the
 * current linger and the timer armed for it. Owned by a {@link PlaceState}, used only under its
 * lock; the place's phase says whether it lingers.
 */
final class Linger {
  long until; // LINGERING: when the place goes back, on the place's clock
  long timerDue; // when the timer armed last fires, on the place's clock
  boolean timerOut; // the timer armed last has not fired yet

  /** A new place is being taken: the last place's timer, if any, finds it gone. */
  void reset() {
    timerOut = false;
  }

  /**
   * The place lingers from {@code now} for {@code lingerNanos}.
   *
   * @return the delay of a timer to arm, or -1 if the timer armed already comes in time
   */
  long start(long now, long lingerNanos) {
    until = now + lingerNanos;
    return timerOut && timerDue - until <= 0 ? -1 : arm(now, lingerNanos);
  }

  /** A timer armed for {@code due} fired (an earlier one may fire after a later was armed). */
  void fired(long due) {
    if (due == timerDue) {
      timerOut = false;
    }
  }

  /** Whether the linger has run out at {@code now}. */
  boolean over(long now) {
    return now - until >= 0;
  }

  /** The delay of a timer for what is left of the linger at {@code now}, or -1 if one is out. */
  long rearm(long now) {
    return timerOut ? -1 : arm(now, until - now);
  }

  private long arm(long now, long delayNanos) {
    timerOut = true;
    timerDue = now + delayNanos;
    return delayNanos;
  }
}

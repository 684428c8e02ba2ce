package io.lockstep.recipes.internal.local;

/**
 * The fairness bound of a place shared by local holds: handoffs in a row, whether another
 * participant may wait (a sign of one was seen), and whether the read of the queue sent at the
 * bound is still out. Owned by a {@link PlaceState}, used only under its lock.
 */
final class Bound {
  int inARow; // local handoffs since the place was granted, or since a read found it alone
  boolean othersSeen; // a sign of another participant: a granting read not alone, a change heard
  boolean checking; // a read of the queue, sent at the bound, has not been answered yet
  int lastMax; // the bound of the hold that let go last: it judges the handoff after it

  /** A new place is being taken. */
  void reset() {
    inARow = 0;
    othersSeen = false;
    checking = false;
  }

  /** Another participant may wait. */
  void sawOthers() {
    othersSeen = true;
  }

  /** Whether a hold with bound {@code max} has had its handoffs in a row. */
  boolean reached(int max) {
    return inARow >= max;
  }

  /** Whether the place must go back: the bound is reached and someone else may wait. */
  boolean mustGiveBack(int max) {
    return reached(max) && othersSeen;
  }

  /**
   * The read at the bound answered. Alone, and no change heard meanwhile: a new run of handoffs.
   * Otherwise (someone queued, our node is gone, the read failed) the place goes back at the bound.
   */
  void checked(boolean alone) {
    checking = false;
    if (alone && !othersSeen) {
      inARow = 0;
    } else {
      othersSeen = true;
    }
  }
}

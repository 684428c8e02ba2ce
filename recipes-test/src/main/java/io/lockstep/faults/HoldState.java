package io.lockstep.faults;

import io.lockstep.recipes.locks.LockState;

/** What a holder has been told about its current hold, as the hold loop asks it. */
interface HoldState {
  /** The last state the holder was told (or read), {@code HELD} until told otherwise. */
  LockState state();

  /**
   * Whether the hold was told {@code HELD} again, after {@code AT_RISK}, at or after {@code nanos}.
   */
  boolean restoredSince(long nanos);
}

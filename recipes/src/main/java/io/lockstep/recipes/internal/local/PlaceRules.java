package io.lockstep.recipes.internal.local;

import java.util.List;

/**
 * The table of a place shared by a process's local holds: an event in, the steps out, and what a
 * member holds. Two tables share the events, the steps and their runner ({@link LocalPlace}): the
 * mutex's turn-taking ({@link PlaceMachine}) and concurrent readers on one read node ({@link
 * SharedReadRules}). Called only under its {@link PlaceState}'s lock; no I/O, no threads, no locks.
 */
interface PlaceRules {
  /** One column of the table; the steps to take are added to {@code steps}, in order. */
  void on(PlaceEvent event, List<PlaceStep> steps);

  /** The id of the place's latest attempt (for events that report its phase). */
  int currentPlace();

  /** Where the place stands. */
  PlaceState.Phase placePhase();

  /**
   * Whether the place may be dropped: every lock object on it closed, and it has no node, holder or
   * waiter.
   */
  boolean isRetirable();

  /** What {@code member} holds, or null if it does not hold (any more). */
  PlaceState.Held heldBy(Contender member);

  /**
   * What {@code member} holds, recording that it hands out checks of its version; null if it does
   * not hold (any more), or if its checks are not the place node's.
   */
  PlaceState.Held takeChecks(Contender member);

  /** The place's node and owner as {@code member} knew them (also once lost), or null. */
  PlaceState.Held lastHeldBy(Contender member);
}

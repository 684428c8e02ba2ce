package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.internal.engine.Guarded;
import io.lockstep.recipes.internal.engine.Outbox;
import io.lockstep.recipes.internal.engine.Phase;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The state of one process's place in a lock's queue, shared by its local contenders (local
 * handoff), and its only owner: the place's attempt and phase, the members waiting and holding, the
 * fence, and the count of handoffs in a row. A {@link PlaceEvent} goes in through {@link
 * #on(PlaceEvent)}, which changes the state under its lock and returns the {@link PlaceStep}s to
 * take. No I/O, no threads: {@link LocalPlace} does those around it.
 */
final class PlaceState {
  /*
   * Algorithm notes.
   *
   * The table (place x event -> steps) is in docs/design.md and PlaceStateTest checks every cell.
   * Repeatedly: members join in arrival order; with no place, one is taken (an attempt). Granted,
   * the first waiter holds. A release hands the place to the next waiter, in memory, unless nobody
   * waits or the bound is reached while another participant may wait: then the place goes back
   * (its node deleted) and is taken again at the tail if members still wait. The hold that reaches
   * the bound reads the queue; the handoff after it waits for the answer (alone: a new run).
   *
   * Fencing (a token is greater than every token handed out before its grant; checks commit only
   * while their holder holds):
   * - The place's grant gives a token (the zxid the grant was decided at) and version 0. The first
   *   member takes both; a later member that asks takes them if nobody took them yet, else the
   *   place's node is written (same data) and the member takes that write's zxid and version.
   * - A member that took checks makes the next handoff wait for a write of the node: its checks
   *   fail from then on, and the next member may take the write's zxid for free.
   * - Another process is granted only after our node is deleted, so its token (decided at that
   *   deletion, or later) is greater than every local token: see AcquisitionState.
   *
   * Lingering (lock caching): when the last local holder lets go and nobody local waits, a member
   * that asked for it keeps the place (LINGERING) instead of giving it back, while the granting
   * read's child watch is armed (granted alone, no change of the queue heard since): that watch is
   * how we hear the next participant queue, at no request. The place goes back at the first change
   * heard, when it may be lost or at risk, or when the linger runs out (one timer, re-armed only
   * when it fires early). A member joining a lingering place holds at once, in memory: the node is
   * ours and nobody else holds, since any other participant is granted only after our node goes.
   * It is a handoff like any other for fencing (a token nobody took, else a write; a write first
   * after a hold that took checks), and begins a new run of the bound.
   *
   * Closing: when the last open lock object on the place closes (Unused), a lingering place goes
   * back at once and a held one is not kept at its last release. A place that is then idle (no
   * node, holder or waiter) asks to be dropped from its client's shared objects (Retire); a lock
   * object opening on it before that happens keeps it (Used), under the same map lock.
   */

  /** Where the place stands. */
  enum Phase {
    /** No node: nobody local wants the lock, or the last place went back. */
    NONE,
    /** The place's attempt is under way. */
    TAKING,
    /** The place is granted: a member holds it, or the next handoff awaits a read or a write. */
    HELD,
    /**
     * The place is kept with nobody local holding or waiting (lock caching), until its linger runs
     * out or another participant queues; a member that joins holds at once.
     */
    LINGERING
  }

  private final Guarded<PlaceRules> machine; // the lock and what it guards

  /**
   * A place whose holds take turns (the mutex's), whose linger deadlines read {@code clock}
   * (nanoseconds, as {@link System#nanoTime}).
   */
  PlaceState(LongSupplier clock) {
    this(new PlaceMachine(clock));
  }

  private PlaceState(PlaceRules rules) {
    this.machine = new Guarded<>(rules);
  }

  /**
   * A place whose holds are concurrent readers of one read node ({@link SharedReadRules}), whose
   * linger deadlines read {@code clock}.
   */
  static PlaceState sharedReads(LongSupplier clock) {
    return new PlaceState(new SharedReadRules(clock));
  }

  /** The node a member holds, its owning session, token and check version, read together. */
  record Held(String node, long owner, long token, int version) {}

  /** One event in, the steps to take out, in order. */
  List<PlaceStep> on(PlaceEvent event) {
    return machine.apply(
        m -> {
          List<PlaceStep> steps = new ArrayList<>(2);
          m.on(event, steps);
          return steps;
        });
  }

  /**
   * As {@link #on(PlaceEvent)}, the steps handed to {@code outbox} under the lock.
   *
   * @return whether the caller must drain the outbox
   */
  boolean on(PlaceEvent event, Outbox<PlaceStep> outbox) {
    return on(event, outbox, new ArrayList<>(2));
  }

  /**
   * As {@link #on(PlaceEvent, Outbox)}, the steps also left in {@code steps} for the caller to look
   * at (a release learns whether it gave the place back).
   *
   * @return whether the caller must drain the outbox
   */
  boolean on(PlaceEvent event, Outbox<PlaceStep> outbox, List<PlaceStep> steps) {
    return machine.apply(
        m -> {
          m.on(event, steps);
          boolean drain = false;
          for (PlaceStep step : steps) {
            drain |= outbox.add(step);
          }
          return drain;
        });
  }

  /** The id of the place's latest attempt (for events that report its phase). */
  int currentPlace() {
    return machine.apply(PlaceRules::currentPlace);
  }

  /** Where the place stands. */
  Phase placePhase() {
    return machine.apply(PlaceRules::placePhase);
  }

  /**
   * Whether the place may be dropped: every lock object on it closed, and it has no node, holder or
   * waiter.
   */
  boolean isRetirable() {
    return machine.apply(PlaceRules::isRetirable);
  }

  /** Where {@code member} stands. */
  io.lockstep.recipes.internal.engine.Phase phaseOf(Contender member) {
    return machine.apply(m -> member.tenure == null ? member.phase : member.tenure.phase());
  }

  /** {@code member}'s lost reason, or null. */
  String lostReasonOf(Contender member) {
    return machine.apply(m -> member.tenure == null ? null : member.tenure.lostReason());
  }

  /** What {@code member} holds, or null if it does not hold (any more). */
  Held heldBy(Contender member) {
    return machine.apply(m -> m.heldBy(member));
  }

  /**
   * What {@code member} holds, recording that it hands out checks of its version (the next handoff
   * then writes the node first); null if it does not hold (any more).
   */
  Held takeChecks(Contender member) {
    return machine.apply(m -> m.takeChecks(member));
  }

  /** The place's node and owner as {@code member} knew them (also once lost), or null. */
  Held lastHeldBy(Contender member) {
    return machine.apply(m -> m.lastHeldBy(member));
  }
}

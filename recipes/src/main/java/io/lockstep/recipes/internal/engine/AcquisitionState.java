package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.engine.Step.ArmedWatch;
import java.util.List;

/**
 * The state of one acquisition, and its only owner: phase, epoch, nodes, owning session, fencing
 * token, watch and counters, in its {@link AcquisitionMachine}. A {@link StateEvent} goes in
 * through {@link #on(StateEvent)}, which takes the state lock, lets the machine change the state,
 * and returns the {@link Step} to take next. No I/O, no threads, no callbacks: {@link Acquisition}
 * does those around it.
 */
public final class AcquisitionState extends Guarded<AcquisitionMachine> {
  /*
   * Algorithm notes.
   *
   * The table (phase x event -> step) is written out in AcquisitionStateTest, which checks every
   * cell, and drawn in docs/design.md. In short: answers carry the epoch they were asked in and
   * are ignored when stale, except a create's, whose node is tidied away; waiting phases move
   * forward on answers and requeue in a new epoch when our nodes are lost; holding phases only
   * move to AT_RISK, back to HELD, to LOST, and to RELEASED.
   *
   * Invariants:
   * - Exactly one of grant and withdraw wins, under `lock`: the caller never misses a grant.
   * - Every node we may have created is removed: by Release, by End's cleanup, by the Tidy of a
   *   late create answer, or by a sweep for our protection id when a create's outcome was unknown
   *   as the attempt ended.
   * - The owner of our nodes is the session the server names (the created node's
   *   ephemeralOwner), never the handle's id before the request was sent (0 before connecting).
   * - A grant while disconnected is AT_RISK at once: a hold hears of risk before its session can
   *   expire, whatever came first.
   */

  /** What the owner of an acquisition can read of it, all from one moment. */
  public record View(
      Phase phase, long token, List<String> nodes, long owner, String lostReason, boolean alone) {}

  /** Owns {@code machine}, which nothing else may touch from now on: it is the state's lock. */
  AcquisitionState(AcquisitionMachine machine) {
    super(machine);
  }

  /** The first step: create our nodes. */
  Step start() {
    return apply(AcquisitionMachine::start);
  }

  /**
   * As {@link #start()}, the step handed to {@code outbox} under the state lock.
   *
   * @return whether the caller must drain the outbox
   */
  boolean start(Outbox<Step> outbox) {
    return apply(outbox, null, (m, o, unused) -> o.add(m.start()));
  }

  /**
   * As {@link #on(StateEvent)}, the step handed to {@code outbox} under the state lock, so that
   * steps are carried out in the order they were decided, whichever threads deliver the events.
   *
   * @return whether the caller must drain the outbox
   */
  boolean on(StateEvent event, Outbox<Step> outbox) {
    return apply(event, outbox, AcquisitionState::step);
  }

  /** The step of {@code event}, handed to {@code outbox}; whether to drain it. Under the lock. */
  private static boolean step(AcquisitionMachine m, StateEvent event, Outbox<Step> outbox) {
    Step step = m.on(event);
    return step != Step.IGNORE && outbox.add(step);
  }

  /** One event in, the next step out. */
  Step on(StateEvent event) {
    return apply(m -> m.on(event));
  }

  /** Records the armed predecessor watch; false if it is no longer wanted. */
  boolean watchArmed(int e, int generation, ArmedWatch armed) {
    return apply(m -> m.watchArmed(e, generation, armed));
  }

  /** Where the attempt or hold stands (what {@link #view()} says, without the rest). */
  Phase phase() {
    return apply(AcquisitionMachine::phase);
  }

  /** The phase, token, nodes, owner and loss reason, read together. */
  public View view() {
    return apply(AcquisitionMachine::view);
  }
}

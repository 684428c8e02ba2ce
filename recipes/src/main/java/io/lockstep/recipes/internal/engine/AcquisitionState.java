package io.lockstep.recipes.internal.engine;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.lockstep.recipes.internal.engine.Step.ArmedWatch;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.internal.zk.Retries;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The state of one acquisition, and its only owner: phase, epoch, nodes, owning session, fencing
 * token, watch and counters, in its {@link AcquisitionMachine}. A {@link StateEvent} goes in
 * through {@link #on(StateEvent)}, which takes the state lock, lets the machine change the state,
 * and returns the {@link Step} to take next. No I/O, no threads, no callbacks: {@link Acquisition}
 * does those around it.
 */
public final class AcquisitionState {
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

  private final ReentrantLock lock = new ReentrantLock();

  @GuardedBy("lock")
  private final AcquisitionMachine machine;

  /**
   * @param description the lock path(s), for messages
   * @param revocable whether a grant first watches our own node (Curator's revocation protocol)
   * @param watchFirstRead whether the attempt's first read leaves a child watch: worth it when the
   *     queue is likely empty, since that watch then tells an uncontended holder of its node's
   *     deletion at no extra request; where a queue is likely, it would only fire at the next
   *     enqueue, and a grant without it watches our own node instead
   * @param watchGraceNanos how long a hold that nothing watches goes before it watches its own
   *     node: a shorter hold costs no request and no watch event for it (see {@link GrantedState})
   */
  AcquisitionState(
      List<Slot> slots,
      String description,
      boolean revocable,
      boolean watchFirstRead,
      Retries retries,
      Supplier<String> protectionIds,
      long watchGraceNanos) {
    AcquisitionMachine made =
        new AcquisitionMachine(
            slots, description, revocable, watchFirstRead, retries, protectionIds, watchGraceNanos);
    lock.lock();
    try {
      this.machine = made;
    } finally {
      lock.unlock();
    }
  }

  /** The first step: create our nodes. */
  Step start() {
    lock.lock();
    try {
      return machine.start();
    } finally {
      lock.unlock();
    }
  }

  /**
   * As {@link #start()}, the step handed to {@code outbox} under the state lock.
   *
   * @return whether the caller must drain the outbox
   */
  boolean start(Outbox<Step> outbox) {
    lock.lock();
    try {
      return outbox.add(machine.start());
    } finally {
      lock.unlock();
    }
  }

  /**
   * As {@link #on(StateEvent)}, the step handed to {@code outbox} under the state lock, so that
   * steps are carried out in the order they were decided, whichever threads deliver the events.
   *
   * @return whether the caller must drain the outbox
   */
  boolean on(StateEvent event, Outbox<Step> outbox) {
    lock.lock();
    try {
      Step step = machine.on(event);
      return step != Step.IGNORE && outbox.add(step);
    } finally {
      lock.unlock();
    }
  }

  /** One event in, the next step out. */
  Step on(StateEvent event) {
    lock.lock();
    try {
      return machine.on(event);
    } finally {
      lock.unlock();
    }
  }

  /** Records the armed predecessor watch; false if it is no longer wanted. */
  boolean watchArmed(int e, int generation, ArmedWatch armed) {
    lock.lock();
    try {
      return machine.watchArmed(e, generation, armed);
    } finally {
      lock.unlock();
    }
  }

  /** Where the attempt or hold stands (what {@link #view()} says, without the rest). */
  Phase phase() {
    lock.lock();
    try {
      return machine.phase();
    } finally {
      lock.unlock();
    }
  }

  /** The phase, token, nodes, owner and loss reason, read together. */
  public View view() {
    lock.lock();
    try {
      return machine.view();
    } finally {
      lock.unlock();
    }
  }
}

package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.internal.engine.Phase;
import io.lockstep.recipes.internal.engine.Tenure;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The transitions of one process's place: place x event -&gt; steps, the table of {@link
 * PlaceState} (which owns this and calls it only under its lock). It delegates the fencing
 * bookkeeping to its {@link Fence} and the fairness bound to its {@link Bound}. No I/O, no threads,
 * no locks: not thread-safe.
 */
final class PlaceMachine {
  private int place; // names the place's latest attempt; news of older ones is stale
  private PlaceState.Phase phase = PlaceState.Phase.NONE;
  private boolean placeDecided; // TAKING: the attempt waits behind someone
  private boolean atRisk; // HELD: the place's connection is suspended
  private String node; // HELD: the place's node
  private long owner; // HELD: the session owning it
  private final Deque<Contender> waiting = new ArrayDeque<>();
  private Contender holder; // HELD: the member holding, or null while a handoff awaits an answer
  private final Fence fence = new Fence();
  private final Bound bound = new Bound();

  /** The id of the place's latest attempt (for events that report its phase). */
  int currentPlace() {
    return place;
  }

  /** Where the place stands. */
  PlaceState.Phase placePhase() {
    return phase;
  }

  /** Where {@code member} stands. */
  Phase phaseOf(Contender member) {
    return member.tenure == null ? member.phase : member.tenure.phase();
  }

  /** {@code member}'s lost reason, or null. */
  String lostReasonOf(Contender member) {
    return member.tenure == null ? null : member.tenure.lostReason();
  }

  /** What {@code member} holds, or null if it does not hold (any more). */
  PlaceState.Held heldBy(Contender member) {
    return holder == member && member.tenure.isHolding()
        ? new PlaceState.Held(node, owner, member.token, member.version)
        : null;
  }

  /**
   * What {@code member} holds, recording that it hands out checks of its version (the next handoff
   * then writes the node first); null if it does not hold (any more).
   */
  PlaceState.Held takeChecks(Contender member) {
    if (holder != member || !member.tenure.isHolding() || member.version < 0) {
      return null;
    }
    checksTaken(member);
    return new PlaceState.Held(node, owner, member.token, member.version);
  }

  /** The place's node and owner as {@code member} knew them (also once lost), or null. */
  PlaceState.Held lastHeldBy(Contender member) {
    return member.tenure == null
        ? null
        : new PlaceState.Held(node, owner, member.token, member.version);
  }

  /** One event in; the steps to take are added to {@code steps}, in order. */
  void on(PlaceEvent event, List<PlaceStep> steps) {
    if (event instanceof PlaceEvent.Join join) {
      join(join.member(), steps);
    } else if (event instanceof PlaceEvent.Withdraw withdraw) {
      withdraw(withdraw.member(), steps);
    } else if (event instanceof PlaceEvent.Release release) {
      release(release, steps);
    } else if (event instanceof PlaceEvent.PlaceDecided decided) {
      placeDecided(decided.place(), steps);
    } else if (event instanceof PlaceEvent.PlaceGranted granted) {
      placeGranted(granted, steps);
    } else if (event instanceof PlaceEvent.PlaceEnded ended) {
      placeEnded(ended, steps);
    } else if (event instanceof PlaceEvent.PlaceChanged changed) {
      placeChanged(changed, steps);
    } else if (event instanceof PlaceEvent.QueueChanged changed) {
      if (changed.place() == place && phase != PlaceState.Phase.NONE) {
        bound.sawOthers(); // a change heard before the grant counts as much as one after
      }
    } else if (event instanceof PlaceEvent.QueueChecked checked) {
      queueChecked(checked, steps);
    } else if (event instanceof PlaceEvent.FenceAsked asked) {
      fenceAsked(asked, steps);
    } else if (event instanceof PlaceEvent.FenceWritten written) {
      fenceWritten(written, steps);
    } else if (event instanceof PlaceEvent.FenceFailed failed) {
      fenceFailed(failed, steps);
    }
  }

  // ---- members coming and going ----

  private void join(Contender member, List<PlaceStep> steps) {
    waiting.add(member);
    if (phase == PlaceState.Phase.NONE) {
      take(steps);
    } else if (phase == PlaceState.Phase.HELD || placeDecided) {
      decide(member, steps); // someone holds: a zero budget has its answer
    }
  }

  private void withdraw(Contender member, List<PlaceStep> steps) {
    if (!waiting.remove(member)) {
      return; // granted, failed or withdrawn first: its phase says which
    }
    member.phase = Phase.WITHDRAWN;
    boolean unwanted = waiting.isEmpty() && holder == null;
    if (unwanted && phase == PlaceState.Phase.TAKING) {
      phase = PlaceState.Phase.NONE;
      steps.add(new PlaceStep.WithdrawPlace(place, member));
      steps.add(new PlaceStep.Ended(member, null, true));
      return;
    }
    steps.add(new PlaceStep.Ended(member, null, false)); // a held place's answer decides
  }

  private void release(PlaceEvent.Release release, List<PlaceStep> steps) {
    Contender member = release.member();
    if (member.tenure == null) {
      throw new IllegalStateException("release of an attempt never granted: " + member.phase);
    }
    String lost = member.tenure.lostBeforeRelease();
    if (!member.tenure.release()) {
      steps.add(new PlaceStep.Complete(release.done())); // released before
      return;
    }
    if (member.fencePending) {
      refuseFence(member, notHolding(member), steps); // another thread's ask cannot be served now
    }
    if (holder != member) {
      steps.add(new PlaceStep.Released(member, member.token, lost, release.done()));
      return; // lost, and the place let go already
    }
    holder = null;
    bound.lastMax = member.maxInARow;
    boolean placeLost = release.placeLost() && release.place() == place;
    CompletableFuture<Void> done = release.done();
    if (placeLost || waiting.isEmpty() || bound.mustGiveBack(member.maxInARow)) {
      steps.add(new PlaceStep.Released(member, member.token, lost, null));
      giveBackAndRetake(done, steps);
      return;
    }
    if (bound.reached(member.maxInARow) && !bound.checking) {
      check(steps); // sent at the grant already; here so that no path can strand the place
    }
    if (fence.checksTaken && fence.write == 0) {
      write(false, steps); // the checks handed out must fail before anyone else holds
    }
    resume(false, steps); // the next holder is told first: the handoff's path is the short one
    steps.add(new PlaceStep.Released(member, member.token, lost, done));
  }

  // ---- the place's attempt ----

  private void take(List<PlaceStep> steps) {
    place++;
    phase = PlaceState.Phase.TAKING;
    placeDecided = false;
    bound.reset();
    steps.add(new PlaceStep.Take(place));
  }

  private void placeDecided(int decided, List<PlaceStep> steps) {
    if (decided != place || phase != PlaceState.Phase.TAKING) {
      return;
    }
    placeDecided = true;
    for (Contender member : waiting) {
      decide(member, steps);
    }
  }

  private void decide(Contender member, List<PlaceStep> steps) {
    if (!member.decided) {
      member.decided = true;
      steps.add(new PlaceStep.Decided(member));
    }
  }

  private void placeGranted(PlaceEvent.PlaceGranted granted, List<PlaceStep> steps) {
    if (granted.place() != place || phase != PlaceState.Phase.TAKING) {
      return; // withdrawn meanwhile: the withdrawal releases a grant that raced it
    }
    phase = PlaceState.Phase.HELD;
    node = granted.node();
    owner = granted.owner();
    atRisk = granted.atRisk();
    fence.granted(granted.token());
    if (!granted.alone()) {
      bound.sawOthers();
    }
    if (granted.lost() || waiting.isEmpty()) {
      giveBackAndRetake(null, steps); // lost on its way to us, or everyone gave up meanwhile
      return;
    }
    Contender first = waiting.poll();
    first.token = fence.token; // the first member of a place keeps the grant's token
    first.version = fence.version;
    fence.tokenTaken = true;
    grant(first, steps);
  }

  private void placeEnded(PlaceEvent.PlaceEnded ended, List<PlaceStep> steps) {
    if (ended.place() != place || phase != PlaceState.Phase.TAKING) {
      return; // withdrawn by us: nothing waits for it
    }
    phase = PlaceState.Phase.NONE;
    for (Contender member : waiting) {
      member.phase = Phase.FAILED;
      steps.add(new PlaceStep.Ended(member, ended.failure(), false));
    }
    waiting.clear();
  }

  private void placeChanged(PlaceEvent.PlaceChanged changed, List<PlaceStep> steps) {
    if (changed.place() != place || phase != PlaceState.Phase.HELD) {
      return; // news of a place given back, or of one not granted yet (its grant says)
    }
    if (changed.state() == LockState.LOST) {
      lose("the lock's node or session was lost", steps);
      return;
    }
    boolean suspended = changed.state() == LockState.AT_RISK;
    atRisk = suspended;
    if (holder != null && (suspended ? holder.tenure.suspend() : holder.tenure.restore())) {
      steps.add(new PlaceStep.Notify(holder, changed.state(), holder.token, null));
    }
  }

  /** The place is lost: its holder hears it, and waiters take a new place. */
  private void lose(String reason, List<PlaceStep> steps) {
    if (holder != null) {
      if (holder.tenure.lose(reason)) {
        steps.add(new PlaceStep.Notify(holder, LockState.LOST, holder.token, reason));
      }
      refuseFence(holder, new LockOwnershipLostException(reason), steps);
      holder = null;
    }
    giveBackAndRetake(null, steps);
  }

  private void giveBackAndRetake(CompletableFuture<Void> done, List<PlaceStep> steps) {
    giveBack(done, steps);
    if (!waiting.isEmpty()) {
      take(steps);
    }
  }

  private void giveBack(CompletableFuture<Void> done, List<PlaceStep> steps) {
    phase = PlaceState.Phase.NONE;
    steps.add(new PlaceStep.GiveBack(place, done));
  }

  // ---- handing on ----

  /** The next waiter holds, unless the handoff must wait, or the place must go back. */
  private void resume(boolean placeLost, List<PlaceStep> steps) {
    if (phase != PlaceState.Phase.HELD || holder != null || bound.checking || fence.write != 0) {
      return;
    }
    if (placeLost || waiting.isEmpty() || bound.mustGiveBack(bound.lastMax)) {
      giveBackAndRetake(null, steps);
      return;
    }
    Contender next = waiting.poll();
    bound.inARow++;
    if (!fence.tokenTaken) {
      next.token = fence.token; // fresh, and nobody's yet: it costs nothing
      next.version = fence.version;
      fence.tokenTaken = true;
    }
    grant(next, steps);
    if (bound.reached(next.maxInARow) && !bound.othersSeen && !bound.checking) {
      check(steps); // the read goes out while this hold lasts
    }
  }

  private void grant(Contender member, List<PlaceStep> steps) {
    holder = member;
    member.tenure = new Tenure(!atRisk);
    member.decided = true;
    steps.add(new PlaceStep.Grant(member, member.token, atRisk));
  }

  private void check(List<PlaceStep> steps) {
    bound.checking = true;
    steps.add(new PlaceStep.CheckQueue(place));
  }

  private void queueChecked(PlaceEvent.QueueChecked checked, List<PlaceStep> steps) {
    if (checked.place() != place || phase != PlaceState.Phase.HELD || !bound.checking) {
      return; // given back or lost meanwhile
    }
    bound.checked(checked.alone());
    resume(checked.placeLost(), steps);
  }

  // ---- fencing ----

  private void fenceAsked(PlaceEvent.FenceAsked asked, List<PlaceStep> steps) {
    Contender member = asked.member();
    member.fenceReady = asked.ready();
    if (holder != member || !member.tenure.isHolding()) {
      steps.add(new PlaceStep.FenceRefused(member, notHolding(member)));
    } else if (member.token != 0) {
      steps.add(new PlaceStep.FenceReady(member));
    } else if (!fence.tokenTaken && fence.write == 0) {
      member.token = fence.token;
      member.version = fence.version;
      fence.tokenTaken = true;
      steps.add(new PlaceStep.FenceReady(member));
    } else {
      member.fencePending = true;
      if (fence.write == 0) {
        write(true, steps);
      }
    }
  }

  private void checksTaken(Contender member) {
    if (holder == member && member.version == fence.version) {
      fence.checksTaken = true;
    }
  }

  private void write(boolean forHolder, List<PlaceStep> steps) {
    fence.write = ++fence.writes;
    fence.forHolder = forHolder;
    steps.add(new PlaceStep.Write(place, fence.write));
  }

  private void fenceWritten(PlaceEvent.FenceWritten written, List<PlaceStep> steps) {
    if (written.place() != place
        || phase != PlaceState.Phase.HELD
        || !fence.isOut(written.write())) {
      return;
    }
    fence.written(written.zxid(), written.version());
    if (holder != null && holder.fencePending) {
      holder.fencePending = false;
      holder.token = fence.token;
      holder.version = fence.version;
      fence.tokenTaken = true;
      steps.add(new PlaceStep.FenceReady(holder));
    }
    resume(written.placeLost(), steps);
  }

  private void fenceFailed(PlaceEvent.FenceFailed failed, List<PlaceStep> steps) {
    if (failed.place() != place || phase != PlaceState.Phase.HELD || !fence.isOut(failed.write())) {
      return;
    }
    boolean handoff = !fence.forHolder;
    fence.write = 0;
    fence.tokenTaken = true; // the version may have moved: the next token needs a write
    if (failed.nodeGone()) {
      lose("our lock node was deleted", steps);
      return;
    }
    if (holder != null && holder.fencePending) {
      refuseFence(holder, failed.failure(), steps);
    }
    if (handoff && holder == null) {
      giveBackAndRetake(null, steps); // the old checks may still pass: their node must go
    }
  }

  private void refuseFence(Contender member, RuntimeException failure, List<PlaceStep> steps) {
    if (member.fencePending) {
      member.fencePending = false;
      steps.add(new PlaceStep.FenceRefused(member, failure));
    }
  }

  /** Why {@code member} gets no fence; the member words it for its caller. */
  private static RuntimeException notHolding(Contender member) {
    if (member.tenure != null && member.tenure.phase() == Phase.LOST) {
      return new LockOwnershipLostException(member.tenure.lostReason());
    }
    return new IllegalStateException("this hold was let go");
  }
}

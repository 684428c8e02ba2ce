package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.internal.engine.Tenure;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The transitions of one process's place: place x event -&gt; steps, the table of {@link
 * PlaceState} (which owns this and calls it only under its lock). The place's own attempt, and the
 * columns both tables answer alike, are its {@link PlaceTable}'s; it delegates the fencing
 * bookkeeping to its {@link Fence}, the fairness bound to its {@link Bound} and the deadline and
 * pause of a place kept for later (lock caching) to its {@link Linger}. No I/O, no threads, no
 * locks: not thread-safe.
 */
final class PlaceMachine extends PlaceTable {
  Contender holder; // HELD: the member holding, or null while a handoff awaits an answer
  final Fence fence = new Fence();
  final PlaceFencing fencing = new PlaceFencing(this);
  private final Bound bound = new Bound();

  PlaceMachine(LongSupplier clock) {
    super(clock);
  }

  @Override
  void other(PlaceEvent event, List<PlaceStep> steps) {
    if (event instanceof PlaceEvent.FenceAsked asked) {
      fencing.asked(asked, steps);
    } else if (event instanceof PlaceEvent.FenceWritten written) {
      fencing.written(written, steps);
    } else if (event instanceof PlaceEvent.FenceFailed failed) {
      fencing.failed(failed, steps);
    } else if (event instanceof PlaceEvent.YieldAtRelease yield) {
      yield.member().yields = true;
    }
  }

  @Override
  public PlaceState.Held heldBy(Contender member) {
    return fencing.heldBy(member);
  }

  @Override
  public PlaceState.Held takeChecks(Contender member) {
    return fencing.takeChecks(member);
  }

  @Override
  public PlaceState.Held lastHeldBy(Contender member) {
    return fencing.lastHeldBy(member);
  }

  // ---- members coming and going ----

  @Override
  void join(PlaceEvent.Join join, List<PlaceStep> steps) {
    if (join.placeLost() && join.place() == place && isGranted()) {
      lose("the lock's node or session was lost", steps); // before its notice: nobody joins it
    }
    Contender member = join.member();
    waiting.add(member);
    linger.joined(member.lingerNanos);
    if (phase == PlaceState.Phase.LINGERING) {
      unlinger(steps);
    } else if (phase == PlaceState.Phase.NONE) {
      take(steps);
    } else if (phase == PlaceState.Phase.HELD || placeDecided) {
      Contender.decide(member, steps); // someone holds: a zero budget has its answer
    }
  }

  @Override
  boolean isHeld() {
    return holder != null;
  }

  @Override
  void released(PlaceEvent.Release release, PlaceStep.Released released, List<PlaceStep> steps) {
    Contender member = release.member();
    if (member.fencePending) {
      PlaceFencing.refuse(
          member,
          PlaceFencing.notHolding(member),
          steps); // another thread's ask cannot be served now
    }
    if (holder != member) {
      steps.add(released);
      return; // lost, and the place let go already
    }
    holder = null;
    bound.lastMax = member.maxInARow;
    boolean placeLost = release.placeLost() && release.place() == place;
    if (!placeLost && waiting.isEmpty() && !member.yields && mayLinger(member)) {
      lingerAfter(member, released, steps);
      return;
    }
    if (placeLost || waiting.isEmpty() || member.yields || bound.mustGiveBack(member.maxInARow)) {
      steps.add(released.doneByGiveBack());
      giveBackAndRetake(release.done(), steps);
      return;
    }
    if (bound.reached(member.maxInARow) && !bound.checking) {
      check(steps); // sent at the grant already; here so that no path can strand the place
    }
    if (fence.checksTaken && fence.write == 0) {
      write(false, steps); // the checks handed out must fail before anyone else holds
    }
    resume(false, steps); // the next holder is told first: the handoff's path is the short one
    steps.add(released);
  }

  // ---- the place's attempt ----

  @Override
  void resetForTake() {
    bound.reset();
  }

  @Override
  void placeDecided(int decided, List<PlaceStep> steps) {
    if (decided(decided, steps)) {
      linger.sawOthers(); // our attempt waits behind someone
    }
  }

  @Override
  void placeGranted(PlaceEvent.PlaceGranted granted, List<PlaceStep> steps) {
    if (!granted(granted)) {
      return; // withdrawn meanwhile: the withdrawal releases a grant that raced it
    }
    fence.granted(granted.token());
    if (!granted.alone()) {
      sawOthers();
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

  @Override
  void placeChanged(PlaceEvent.PlaceChanged changed, List<PlaceStep> steps) {
    if (changed.place() != place || !isGranted()) {
      return; // news of a place given back, or of one not granted yet (its grant says)
    }
    if (changed.state() == LockState.LOST) {
      lose("the lock's node or session was lost", steps);
      return;
    }
    if (changed.state() == LockState.AT_RISK && phase == PlaceState.Phase.LINGERING) {
      atRisk = true;
      giveBack(null, steps); // it may be lost, and we may not hear who queues: nobody needs it
      return;
    }
    boolean suspended = changed.state() == LockState.AT_RISK;
    atRisk = suspended;
    if (holder != null && (suspended ? holder.tenure.suspend() : holder.tenure.restore())) {
      steps.add(new PlaceStep.Notify(holder, changed.state(), holder.token, null));
    }
    resume(false, steps); // HELD again: a hold let go while at risk passes on now
  }

  /** The place is lost: its holder hears it, and waiters take a new place. */
  void lose(String reason, List<PlaceStep> steps) {
    if (holder != null) {
      if (holder.tenure.lose(reason)) {
        steps.add(new PlaceStep.Notify(holder, LockState.LOST, holder.token, reason));
      }
      PlaceFencing.refuse(holder, new LockOwnershipLostException(reason), steps);
      holder = null;
    }
    giveBackAndRetake(null, steps);
  }

  // ---- handing on ----

  /** The next waiter holds, unless the handoff must wait, or the place must go back. */
  void resume(boolean placeLost, List<PlaceStep> steps) {
    if (phase != PlaceState.Phase.HELD || holder != null || bound.checking || fence.write != 0) {
      return;
    }
    if (atRisk && !placeLost) {
      return; // another process may hold once our session ended: HELD resumes, LOST retakes
    }
    if (placeLost || waiting.isEmpty() || bound.mustGiveBack(bound.lastMax)) {
      giveBackAndRetake(null, steps);
      return;
    }
    bound.inARow++;
    Contender next = handOn(steps);
    if (bound.reached(next.maxInARow) && !bound.othersSeen && !bound.checking) {
      check(steps); // the read goes out while this hold lasts
    }
  }

  /** The next waiter holds, with the place's token if nobody took it yet. */
  private Contender handOn(List<PlaceStep> steps) {
    Contender next = waiting.poll();
    if (!fence.tokenTaken) {
      next.token = fence.token; // fresh, and nobody's yet: it costs nothing
      next.version = fence.version;
      fence.tokenTaken = true;
    }
    grant(next, steps);
    return next;
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

  @Override
  void queueChecked(PlaceEvent.QueueChecked checked, List<PlaceStep> steps) {
    if (checked.place() != place || !isGranted() || !bound.checking) {
      return; // given back or lost meanwhile
    }
    bound.checked(checked.alone());
    if (!checked.alone()) {
      linger.sawOthers();
    }
    if (phase == PlaceState.Phase.LINGERING) {
      if (checked.placeLost() || bound.othersSeen) {
        giveBack(null, steps); // the read went out before the last release: someone is there
      }
      return;
    }
    resume(checked.placeLost(), steps);
  }

  // ---- lingering (lock caching) ----

  /**
   * Whether the place may be kept when {@code member} lets go and nobody local waits: it asked to;
   * we hear the next enqueue (the granting read found it alone and armed a child watch that has not
   * fired); not at risk (we may not hear who queues); no write of the node out (its answer must
   * find the place as it left it); no pause after a sighting of another participant under way.
   */
  private boolean mayLinger(Contender member) {
    return member.lingerNanos > 0
        && !unused
        && !bound.othersSeen
        && !atRisk
        && fence.write == 0
        && linger.mayKeep();
  }

  /** A sign of another participant: the bound and the linger's pause hear of it. */
  private void sawOthers() {
    bound.sawOthers();
    linger.sawOthers();
  }

  /**
   * A member joins the kept place: it holds at once, in memory, and a new run of handoffs begins
   * (no local waiter was passed over). After a hold that took checks, the node is written first, as
   * for any handoff.
   */
  private void unlinger(List<PlaceStep> steps) {
    phase = PlaceState.Phase.HELD;
    bound.inARow = 0;
    if (fence.checksTaken) {
      write(false, steps); // its answer hands the place on
      return;
    }
    handOn(steps);
  }

  /** The granting read's child watch fired: another participant may have queued. */
  @Override
  void queueChanged(int changed, List<PlaceStep> steps) {
    if (changed != place || phase == PlaceState.Phase.NONE) {
      return;
    }
    sawOthers(); // a change heard before the grant counts as much as one after
    if (phase == PlaceState.Phase.LINGERING) {
      giveBack(null, steps); // the place is not ours to keep any more
    }
  }

  @Override
  void lingerDue(PlaceEvent.LingerDue due, List<PlaceStep> steps) {
    if (linger.runsOut(due, place, phase == PlaceState.Phase.LINGERING, steps)) {
      giveBack(null, steps);
    }
  }

  // ---- the lock objects on the place ----

  /** The last open lock object closed: a lingering place goes back, a held one is not kept. */
  @Override
  void unused(List<PlaceStep> steps) {
    unused = true;
    if (phase == PlaceState.Phase.LINGERING) {
      giveBack(null, steps);
    }
  }

  @Override
  public boolean isRetirable() {
    return unused && phase == PlaceState.Phase.NONE && waiting.isEmpty();
  }

  void write(boolean forHolder, List<PlaceStep> steps) {
    fence.write = ++fence.writes;
    fence.forHolder = forHolder;
    steps.add(new PlaceStep.Write(place, fence.write));
  }
}

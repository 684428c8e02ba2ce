package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.internal.engine.Phase;
import io.lockstep.recipes.internal.engine.Tenure;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * The transitions of one process's place: place x event -&gt; steps, the table of {@link
 * PlaceState} (which owns this and calls it only under its lock). It delegates the fencing
 * bookkeeping to its {@link Fence}, the fairness bound to its {@link Bound} and the deadline and
 * pause of a place kept for later (lock caching) to its {@link Linger}. No I/O, no threads, no
 * locks: not thread-safe.
 */
final class PlaceMachine {
  int place; // names the place's latest attempt; news of older ones is stale
  PlaceState.Phase phase = PlaceState.Phase.NONE;
  private boolean placeDecided; // TAKING: the attempt waits behind someone
  private boolean atRisk; // HELD: the place's connection is suspended
  String node; // HELD: the place's node
  long owner; // HELD: the session owning it
  private final Deque<Contender> waiting = new ArrayDeque<>();
  Contender holder; // HELD: the member holding, or null while a handoff awaits an answer
  final Fence fence = new Fence();
  final PlaceFencing fencing = new PlaceFencing(this);
  private final Bound bound = new Bound();
  private final Linger linger;
  private boolean unused; // every lock object on the place closed: keep it no longer than needed
  private boolean retireAsked; // unused and idle: a Retire step went out since it last was used

  PlaceMachine(LongSupplier clock) {
    this.linger = new Linger(clock);
  }

  /** The id of the place's latest attempt (for events that report its phase). */
  int currentPlace() {
    return place;
  }

  /** Where the place stands. */
  PlaceState.Phase placePhase() {
    return phase;
  }

  // ---- members coming and going ----

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

  void withdraw(Contender member, List<PlaceStep> steps) {
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

  void release(PlaceEvent.Release release, List<PlaceStep> steps) {
    PlaceStep.Released released = Contender.release(release, steps);
    if (released == null) {
      return; // released before
    }
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
      phase = PlaceState.Phase.LINGERING;
      linger.start(place, member.lingerNanos, steps);
      steps.add(released);
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

  private void take(List<PlaceStep> steps) {
    place++;
    phase = PlaceState.Phase.TAKING;
    placeDecided = false;
    bound.reset();
    linger.reset();
    steps.add(new PlaceStep.Take(place));
  }

  void placeDecided(int decided, List<PlaceStep> steps) {
    if (decided != place || phase != PlaceState.Phase.TAKING) {
      return;
    }
    placeDecided = true;
    linger.sawOthers(); // our attempt waits behind someone
    for (Contender member : waiting) {
      Contender.decide(member, steps);
    }
  }

  void placeGranted(PlaceEvent.PlaceGranted granted, List<PlaceStep> steps) {
    if (granted.place() != place || phase != PlaceState.Phase.TAKING) {
      return; // withdrawn meanwhile: the withdrawal releases a grant that raced it
    }
    phase = PlaceState.Phase.HELD;
    node = granted.node();
    owner = granted.owner();
    atRisk = granted.atRisk();
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

  void placeEnded(PlaceEvent.PlaceEnded ended, List<PlaceStep> steps) {
    if (ended.place() != place || phase != PlaceState.Phase.TAKING) {
      return; // withdrawn by us: nothing waits for it
    }
    phase = PlaceState.Phase.NONE;
    Contender.failAll(waiting, ended.failure(), steps);
  }

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

  void giveBackAndRetake(CompletableFuture<Void> done, List<PlaceStep> steps) {
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

  /** Whether the place granted to us (held, or kept for later) is ours still. */
  private boolean isGranted() {
    return phase == PlaceState.Phase.HELD || phase == PlaceState.Phase.LINGERING;
  }

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
  void queueChanged(int changed, List<PlaceStep> steps) {
    if (changed != place || phase == PlaceState.Phase.NONE) {
      return;
    }
    sawOthers(); // a change heard before the grant counts as much as one after
    if (phase == PlaceState.Phase.LINGERING) {
      giveBack(null, steps); // the place is not ours to keep any more
    }
  }

  void lingerDue(PlaceEvent.LingerDue due, List<PlaceStep> steps) {
    if (linger.runsOut(due, place, phase == PlaceState.Phase.LINGERING, steps)) {
      giveBack(null, steps);
    }
  }

  // ---- the lock objects on the place ----

  /** The last open lock object closed: a lingering place goes back, a held one is not kept. */
  void unused(List<PlaceStep> steps) {
    unused = true;
    if (phase == PlaceState.Phase.LINGERING) {
      giveBack(null, steps);
    }
  }

  /** A lock object opened on the place again. */
  void used() {
    unused = false;
    retireAsked = false;
  }

  /** Whether the place may be dropped: unused, and no node, holder or waiter. */
  boolean isRetirable() {
    return unused && phase == PlaceState.Phase.NONE && waiting.isEmpty();
  }

  /** After every event: an unused place that became idle asks, once, to be dropped. */
  void retireIfIdle(List<PlaceStep> steps) {
    if (!retireAsked && isRetirable()) {
      retireAsked = true;
      steps.add(new PlaceStep.Retire());
    }
  }

  void write(boolean forHolder, List<PlaceStep> steps) {
    fence.write = ++fence.writes;
    fence.forHolder = forHolder;
    steps.add(new PlaceStep.Write(place, fence.write));
  }
}

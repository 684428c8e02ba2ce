package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.internal.engine.Phase;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * What both tables of a place ({@link PlaceMachine}, {@link SharedReadRules}) keep of the place's
 * own attempt, and the columns they answer alike: which attempt is the latest (news of older ones
 * is stale), where it stands, what it was granted, the members waiting for it, and whether the
 * place may be dropped. The tables decide what a member gets; this writes the attempt's own steps
 * ({@link PlaceStep.Take}, {@link PlaceStep.GiveBack}, {@link PlaceStep.Retire}). Called only under
 * its {@link PlaceState}'s lock: not thread-safe.
 */
abstract class PlaceTable implements PlaceRules {
  int place; // names the place's latest attempt; news of older ones is stale
  PlaceState.Phase phase = PlaceState.Phase.NONE;
  boolean placeDecided; // TAKING: the attempt waits behind someone
  boolean atRisk; // HELD: the place's connection is suspended
  String node; // HELD: the place's node
  long owner; // HELD: the session owning it
  final Deque<Contender> waiting = new ArrayDeque<>();
  final Linger linger; // the deadline and pause of a place kept for later (lock caching)
  boolean unused; // every lock object on the place closed: keep it no longer than needed
  private boolean retireAsked; // unused and idle: a Retire step went out since it last was used

  /** A table whose linger deadlines read {@code clock} (nanoseconds). */
  PlaceTable(LongSupplier clock) {
    this.linger = new Linger(clock);
  }

  /**
   * Routes each event to its column: the columns both tables answer alike are this class's, the
   * others each table's own; after every event an unused place that became idle asks to be dropped.
   */
  @Override
  public final void on(PlaceEvent event, List<PlaceStep> steps) {
    if (event instanceof PlaceEvent.Join join) {
      join(join, steps);
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
      queueChanged(changed.place(), steps);
    } else if (event instanceof PlaceEvent.QueueChecked checked) {
      queueChecked(checked, steps);
    } else if (event instanceof PlaceEvent.LingerDue due) {
      lingerDue(due, steps);
    } else if (event instanceof PlaceEvent.Unused) {
      unused(steps);
    } else if (event instanceof PlaceEvent.Used) {
      used();
    } else {
      other(event, steps);
    }
    retireIfIdle(steps);
  }

  // ---- each table's own columns ----

  /** A member asks for the place. */
  abstract void join(PlaceEvent.Join join, List<PlaceStep> steps);

  /**
   * A member let go of the place, for the first time: {@code released} is its step, which this
   * column adds (done at once, or once the place's node is given back).
   */
  abstract void released(
      PlaceEvent.Release release, PlaceStep.Released released, List<PlaceStep> steps);

  /** The attempt was granted (see {@link #granted}). */
  abstract void placeGranted(PlaceEvent.PlaceGranted granted, List<PlaceStep> steps);

  /** The place's hold changed state: at risk, held again, or lost. */
  abstract void placeChanged(PlaceEvent.PlaceChanged changed, List<PlaceStep> steps);

  /** The granting read's child watch fired: the queue changed. */
  abstract void queueChanged(int changed, List<PlaceStep> steps);

  /** A read of the queue answered. */
  abstract void queueChecked(PlaceEvent.QueueChecked checked, List<PlaceStep> steps);

  /** A linger's timer is due. */
  abstract void lingerDue(PlaceEvent.LingerDue due, List<PlaceStep> steps);

  /** The last open lock object on the place closed. */
  abstract void unused(List<PlaceStep> steps);

  /** An event only this table answers. */
  abstract void other(PlaceEvent event, List<PlaceStep> steps);

  /** What the table resets of its own as a new attempt begins. */
  abstract void resetForTake();

  /** Whether a member holds the place now. */
  abstract boolean isHeld();

  // ---- the columns both tables answer alike ----

  /** A member lets go of the place: its hold ends once, then the table decides about the place. */
  private void release(PlaceEvent.Release release, List<PlaceStep> steps) {
    PlaceStep.Released released = Contender.release(release, steps);
    if (released != null) { // else released before
      released(release, released, steps);
    }
  }

  /**
   * Keeps the place's node after the last holder's release, for its linger: held by nobody until
   * someone joins or the linger ends.
   */
  final void lingerAfter(Contender member, PlaceStep.Released released, List<PlaceStep> steps) {
    phase = PlaceState.Phase.LINGERING;
    linger.start(place, member.lingerNanos, steps);
    steps.add(released);
  }

  @Override
  public final int currentPlace() {
    return place;
  }

  @Override
  public final PlaceState.Phase placePhase() {
    return phase;
  }

  /** Whether the place granted to us (held, or kept for later) is ours still. */
  final boolean isGranted() {
    return phase == PlaceState.Phase.HELD || phase == PlaceState.Phase.LINGERING;
  }

  /** A new attempt at the place: its node goes to the tail of the queue. */
  final void take(List<PlaceStep> steps) {
    place++;
    phase = PlaceState.Phase.TAKING;
    placeDecided = false;
    linger.reset();
    resetForTake();
    steps.add(new PlaceStep.Take(place));
  }

  /** The place's node goes; {@code done}, if any, completes once it is deleted. */
  final void giveBack(CompletableFuture<Void> done, List<PlaceStep> steps) {
    phase = PlaceState.Phase.NONE;
    steps.add(new PlaceStep.GiveBack(place, done));
  }

  /** The place's node goes, and a new attempt begins if members wait. */
  final void giveBackAndRetake(CompletableFuture<Void> done, List<PlaceStep> steps) {
    giveBack(done, steps);
    if (!waiting.isEmpty()) {
      take(steps);
    }
  }

  /**
   * {@code member} gives up waiting; if nobody else waits for the attempt or holds the place, the
   * attempt is withdrawn too.
   */
  final void withdraw(Contender member, List<PlaceStep> steps) {
    if (!waiting.remove(member)) {
      return; // granted, failed or withdrawn first: its phase says which
    }
    member.phase = Phase.WITHDRAWN;
    boolean unwanted = waiting.isEmpty() && !isHeld() && phase == PlaceState.Phase.TAKING;
    if (unwanted) {
      phase = PlaceState.Phase.NONE;
      steps.add(new PlaceStep.WithdrawPlace(place, member));
    }
    steps.add(new PlaceStep.Ended(member, null, unwanted)); // if not, a held place's answer decides
  }

  /** The attempt waits behind someone (see {@link #decided}). */
  void placeDecided(int decided, List<PlaceStep> steps) {
    decided(decided, steps);
  }

  /**
   * The attempt waits behind someone: every waiting member has its answer (a zero budget's).
   *
   * @return false if the news is stale
   */
  final boolean decided(int decided, List<PlaceStep> steps) {
    if (decided != place || phase != PlaceState.Phase.TAKING) {
      return false;
    }
    placeDecided = true;
    for (Contender member : waiting) {
      Contender.decide(member, steps);
    }
    return true;
  }

  /**
   * The attempt was granted: the place holds its node.
   *
   * @return false if the grant is stale (withdrawn meanwhile: the withdrawal releases a grant that
   *     raced it)
   */
  final boolean granted(PlaceEvent.PlaceGranted granted) {
    if (granted.place() != place || phase != PlaceState.Phase.TAKING) {
      return false;
    }
    phase = PlaceState.Phase.HELD;
    node = granted.node();
    owner = granted.owner();
    atRisk = granted.atRisk();
    return true;
  }

  /** The attempt failed: the members waiting for it fail with it. */
  final void placeEnded(PlaceEvent.PlaceEnded ended, List<PlaceStep> steps) {
    if (ended.place() != place || phase != PlaceState.Phase.TAKING) {
      return; // withdrawn by us: nothing waits for it
    }
    phase = PlaceState.Phase.NONE;
    Contender.failAll(waiting, ended.failure(), steps);
  }

  /** A lock object opened on the place again. */
  final void used() {
    unused = false;
    retireAsked = false;
  }

  /** After every event: an unused place that became idle asks, once, to be dropped. */
  final void retireIfIdle(List<PlaceStep> steps) {
    if (!retireAsked && isRetirable()) {
      retireAsked = true;
      steps.add(new PlaceStep.Retire());
    }
  }
}

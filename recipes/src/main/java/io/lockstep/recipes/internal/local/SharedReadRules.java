package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.internal.engine.Tenure;
import io.lockstep.recipes.locks.LockState;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The table of a shared read place (read sharing): the concurrent readers of one process hold on
 * one read node. The first reader takes the place; readers arriving while it is taken are granted
 * with it; readers arriving while it is granted join at once, in memory, unless it is closed. The
 * node goes back when its last reader lets go, and is taken again at the tail if readers wait; with
 * a linger, it is kept with no reader while nobody else queues, until the linger runs out.
 *
 * <p><b>Closed.</b> Readers stop joining (they wait, and take the next place) while a writer of
 * this process waits ({@link PlaceEvent.LocalWriter}), while a read of the queue is out, while the
 * connection is at risk, and once a read found a write node in the queue. A read goes out after the
 * bound of joins in a row (the joiner after it waits for its answer) and when the granting read's
 * child watch fires; so a writer of another process waits for the holds under way and at most the
 * bound's number of joins after its node is created, as local handoff's bound does for the mutex.
 * While readers wait behind a writer found, the queue is read again with a child watch at each
 * change, and a read with no writer opens the place again (the writer gave up).
 *
 * <p><b>Fencing.</b> Readers granted with the place take the grant's token: no token was handed out
 * between that grant and theirs. A reader that joined later has token 0 here; its token and its
 * ownership checks are those of a read node of its own, tied to the place's node, that its {@link
 * PlaceMember} makes when first asked ({@link #takeChecks} is therefore always null). So a release
 * never touches the place's node's version, and a sibling's checks stay good.
 *
 * <p>The place's own attempt, and the columns both tables answer alike, are its {@link
 * PlaceTable}'s. Called only under its {@link PlaceState}'s lock: no I/O, no threads, no locks.
 */
final class SharedReadRules extends PlaceTable {
  private long token; // HELD: the grant's token
  private final Set<Contender> holders = new LinkedHashSet<>(); // identity: no equals
  private int joins; // joins since the grant, or since a read found no writer
  private boolean checking; // a read of the queue is out
  private boolean writerSeen; // a read found a write node: nobody joins this place any more
  private int localWriters; // writers of this process waiting
  private boolean watched; // granted alone, no change heard since: its child watch is armed
  private boolean rereadArmed; // closed by a writer: a read's child watch is armed (or read out)

  /** A table whose linger deadlines read {@code clock} (nanoseconds). */
  SharedReadRules(LongSupplier clock) {
    super(clock);
  }

  /** A writer of this process begins or stops waiting (see <b>Closed</b> above). */
  @Override
  void other(PlaceEvent event, List<PlaceStep> steps) {
    if (!(event instanceof PlaceEvent.LocalWriter writer)) {
      throw new IllegalArgumentException("not an event of a shared read place: " + event);
    }
    if (!writer.waits() && localWriters == 0) {
      throw new IllegalStateException("no writer of this process waits");
    }
    localWriters += writer.waits() ? 1 : -1;
    if (writer.granted() && isGranted()) {
      // the writer queued behind our node and holds: the node is gone, its LOST on the way
      lose("the read node is gone: a writer of this process was granted behind it", steps);
    }
    if (phase == PlaceState.Phase.LINGERING) {
      giveBackAndRetake(null, steps); // the writer must not wait for a node nobody holds
    }
    admitWaiting(steps);
  }

  @Override
  void unused(List<PlaceStep> steps) {
    unused = true; // a kept node goes now; a held one at its last release
    if (phase == PlaceState.Phase.LINGERING) {
      giveBackAndRetake(null, steps);
    }
  }

  // ---- readers coming and going ----

  @Override
  void join(PlaceEvent.Join join, List<PlaceStep> steps) {
    if (join.placeLost() && join.place() == place && isGranted()) {
      lose("the lock's node or session was lost", steps); // before its notice: nobody joins it
    }
    Contender member = join.member();
    linger.joined(member.lingerNanos);
    if (phase == PlaceState.Phase.LINGERING) {
      phase = PlaceState.Phase.HELD; // the kept node: held again at once, a new run of joins
      joins = 0;
    }
    if (phase == PlaceState.Phase.HELD && isOpen()) {
      joinNow(member, steps);
      return;
    }
    waiting.add(member);
    if (phase == PlaceState.Phase.NONE) {
      take(steps);
    } else if (phase == PlaceState.Phase.HELD || placeDecided) {
      Contender.decide(member, steps); // a writer is ahead or comes first: a zero budget's answer
      rereadIfWriterSeen(steps);
    }
  }

  /** Whether a reader may join the granted place now (see <b>Closed</b> above). */
  private boolean isOpen() {
    return !checking && !writerSeen && localWriters == 0 && !atRisk;
  }

  /** {@code member} joins the granted place; at the bound, the queue is read. */
  private void joinNow(Contender member, List<PlaceStep> steps) {
    admit(member, 0, steps);
    if (++joins >= member.maxInARow) {
      check(false, steps);
    }
  }

  /** Readers that waited for the place to open join it, as long as it stays open. */
  private void admitWaiting(List<PlaceStep> steps) {
    while (phase == PlaceState.Phase.HELD && isOpen() && !waiting.isEmpty()) {
      joinNow(waiting.poll(), steps);
    }
  }

  private void admit(Contender member, long memberToken, List<PlaceStep> steps) {
    holders.add(member);
    member.tenure = new Tenure(!atRisk);
    member.decided = true;
    member.token = memberToken;
    member.node = node;
    member.owner = owner;
    steps.add(new PlaceStep.Grant(member, memberToken, atRisk));
  }

  @Override
  boolean isHeld() {
    return !holders.isEmpty();
  }

  @Override
  void released(PlaceEvent.Release release, PlaceStep.Released released, List<PlaceStep> steps) {
    Contender member = release.member();
    if (!holders.remove(member) || !holders.isEmpty()) {
      steps.add(released); // lost, and the place let go already; or other readers still hold it
      return;
    }
    if (waiting.isEmpty() && !release.placeLost() && mayLinger(member)) {
      lingerAfter(member, released, steps); // kept while nobody else queues, until it ends
      return;
    }
    steps.add(released.doneByGiveBack());
    giveBackAndRetake(release.done(), steps); // the last reader: the node goes
  }

  // ---- the place's attempt ----

  @Override
  void resetForTake() {
    joins = 0;
    checking = false;
    writerSeen = false;
    rereadArmed = false; // a watch left for an earlier place fires at its node's delete
  }

  /** Granted: every reader that waited for it holds, with the grant's token. */
  @Override
  void placeGranted(PlaceEvent.PlaceGranted granted, List<PlaceStep> steps) {
    if (!granted(granted)) {
      return; // withdrawn meanwhile: the withdrawal releases a grant that raced it
    }
    token = granted.token();
    watched = granted.alone();
    if (granted.lost() || waiting.isEmpty()) {
      giveBackAndRetake(null, steps); // lost on its way to us, or everyone gave up meanwhile
      return;
    }
    while (!waiting.isEmpty()) {
      admit(waiting.poll(), token, steps);
    }
  }

  @Override
  void placeChanged(PlaceEvent.PlaceChanged changed, List<PlaceStep> steps) {
    if (changed.place() != place || !isGranted()) {
      return; // news of a place given back, or of one not granted yet (its grant says)
    }
    if (phase == PlaceState.Phase.LINGERING && changed.state() != LockState.HELD) {
      giveBackAndRetake(null, steps); // lost, or may be: nobody holds it, nobody needs it
      return;
    }
    if (changed.state() == LockState.LOST) {
      lose("the lock's node or session was lost", steps);
      return;
    }
    atRisk = changed.state() == LockState.AT_RISK;
    for (Contender holder : holders) {
      if (atRisk ? holder.tenure.suspend() : holder.tenure.restore()) {
        steps.add(new PlaceStep.Notify(holder, changed.state(), holder.token, null));
      }
    }
    admitWaiting(steps); // HELD again: readers that waited meanwhile join
  }

  /** The place is lost: every holder hears it, and readers waiting take a new place. */
  private void lose(String reason, List<PlaceStep> steps) {
    for (Contender holder : holders) {
      if (holder.tenure.lose(reason)) {
        steps.add(new PlaceStep.Notify(holder, LockState.LOST, holder.token, reason));
      }
    }
    holders.clear();
    giveBackAndRetake(null, steps);
  }

  private void check(boolean watch, List<PlaceStep> steps) {
    checking = true;
    rereadArmed |= watch;
    steps.add(new PlaceStep.CheckQueue(place, watch));
  }

  /**
   * Closed by a writer, readers waiting: read again, watching the queue (the writer may give up).
   */
  private void rereadIfWriterSeen(List<PlaceStep> steps) {
    boolean closedByWriter = writerSeen && phase == PlaceState.Phase.HELD && !waiting.isEmpty();
    if (closedByWriter && !checking && !rereadArmed) {
      check(true, steps);
    }
  }

  /** The read answered: {@code alone} here means no write node in the queue. */
  @Override
  void queueChecked(PlaceEvent.QueueChecked checked, List<PlaceStep> steps) {
    if (checked.place() != place || phase != PlaceState.Phase.HELD || !checking) {
      return; // given back or lost meanwhile
    }
    checking = false;
    if (checked.alone() && !checked.placeLost()) {
      joins = 0;
      writerSeen = false; // a writer seen before gave up: readers join again
    } else {
      writerSeen = true; // a writer queued (or the read failed): the place drains
      linger.sawOthers(); // and is not kept for a while
    }
    admitWaiting(steps);
    rereadIfWriterSeen(steps);
  }

  // ---- keeping the node with no reader (linger) ----

  /**
   * Whether the last reader's release may keep the node: it asked to; the place is open; the
   * granting read's child watch is armed; a lock object is open; no pause after a writer is on.
   */
  private boolean mayLinger(Contender member) {
    return member.lingerNanos > 0 && isOpen() && watched && !atRisk && !unused && linger.mayKeep();
  }

  /** The child watch fired: a kept node goes (a writer may have queued); a held one reads. */
  @Override
  void queueChanged(int changed, List<PlaceStep> steps) {
    if (changed != place || !isGranted()) {
      return;
    }
    watched = false;
    rereadArmed = false; // every child watch on the queue fired
    if (phase == PlaceState.Phase.LINGERING) {
      giveBackAndRetake(null, steps);
    } else if (isOpen()) {
      check(false, steps); // someone queued or left: a writer, perhaps (no read if closed already)
    } else {
      rereadIfWriterSeen(steps); // the writer seen may have left
    }
  }

  @Override
  void lingerDue(PlaceEvent.LingerDue due, List<PlaceStep> steps) {
    if (linger.runsOut(due, place, phase == PlaceState.Phase.LINGERING, steps)) {
      giveBackAndRetake(null, steps);
    }
  }

  // ---- what members hold ----

  @Override
  public boolean isRetirable() {
    return unused && phase == PlaceState.Phase.NONE && waiting.isEmpty() && holders.isEmpty();
  }

  @Override
  public PlaceState.Held heldBy(Contender member) {
    return holders.contains(member) && member.tenure.isHolding() ? held(member) : null;
  }

  @Override
  public PlaceState.Held takeChecks(Contender member) {
    return null; // a reader's checks are its own node's
  }

  @Override
  public PlaceState.Held lastHeldBy(Contender member) {
    return member.tenure == null ? null : held(member);
  }

  private static PlaceState.Held held(Contender member) {
    return new PlaceState.Held(member.node, member.owner, member.token, -1);
  }
}

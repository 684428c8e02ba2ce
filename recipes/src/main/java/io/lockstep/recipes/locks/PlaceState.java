package io.lockstep.recipes.locks;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;

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
   */

  /** Where the place stands. */
  enum Phase {
    /** No node: nobody local wants the lock, or the last place went back. */
    NONE,
    /** The place's attempt is under way. */
    TAKING,
    /** The place is granted: a member holds it, or the next handoff awaits a read or a write. */
    HELD
  }

  /**
   * A local contender, as the place sees it. Its fields are written under the place's lock only;
   * {@link #lifecycle} is the runner's, opaque to the state.
   */
  static final class Member {
    final int maxInARow;
    final Lifecycle lifecycle;
    io.lockstep.recipes.locks.Phase phase = io.lockstep.recipes.locks.Phase.WAITING;
    Tenure tenure; // from the grant on
    long token; // once fenced: this hold's token; 0 before
    int version = -1; // once fenced: the node version this hold's checks require
    boolean decided; // the first try reached a verdict
    boolean fencePending; // waits for a write of the node
    CompletableFuture<Void> fenceReady; // completed by the runner for FenceReady / FenceRefused
    final CompletableFuture<Void> cleaned = new CompletableFuture<>(); // the runner's
    final CompletableFuture<Void> releaseHeard = new CompletableFuture<>(); // the runner's

    /**
     * @param maxInARow the most local handoffs in a row while others may wait, when this member is
     *     the one to pass the place on
     * @param lifecycle what the runner announces to (null in tests without a runner)
     */
    Member(int maxInARow, Lifecycle lifecycle) {
      this.maxInARow = maxInARow;
      this.lifecycle = lifecycle;
    }
  }

  private final ReentrantLock lock = new ReentrantLock();

  @GuardedBy("lock")
  private int place; // names the place's latest attempt; news of older ones is stale

  @GuardedBy("lock")
  private Phase phase = Phase.NONE;

  @GuardedBy("lock")
  private boolean placeDecided; // TAKING: the attempt waits behind someone

  @GuardedBy("lock")
  private boolean atRisk; // HELD: the place's connection is suspended

  @GuardedBy("lock")
  private String node; // HELD: the place's node

  @GuardedBy("lock")
  private long owner; // HELD: the session owning it

  @GuardedBy("lock")
  private final Deque<Member> waiting = new ArrayDeque<>();

  @GuardedBy("lock")
  private Member holder; // HELD: the member holding, or null while a handoff awaits an answer

  @GuardedBy("lock")
  private final Fence fence = new Fence();

  @GuardedBy("lock")
  private final Bound bound = new Bound();

  /** One event in, the steps to take out, in order. */
  List<PlaceStep> on(PlaceEvent event) {
    lock.lock();
    try {
      List<PlaceStep> steps = new ArrayList<>(2);
      dispatch(event, steps);
      return steps;
    } finally {
      lock.unlock();
    }
  }

  /**
   * As {@link #on(PlaceEvent)}, the steps handed to {@code outbox} under the lock.
   *
   * @return whether the caller must drain the outbox
   */
  boolean on(PlaceEvent event, Outbox<PlaceStep> outbox) {
    lock.lock();
    try {
      boolean drain = false;
      for (PlaceStep step : on(event)) {
        drain |= outbox.add(step);
      }
      return drain;
    } finally {
      lock.unlock();
    }
  }

  /** The id of the place's latest attempt (for events that report its phase). */
  int currentPlace() {
    lock.lock();
    try {
      return place;
    } finally {
      lock.unlock();
    }
  }

  /** Where the place stands. */
  Phase placePhase() {
    lock.lock();
    try {
      return phase;
    } finally {
      lock.unlock();
    }
  }

  /** Where {@code member} stands. */
  io.lockstep.recipes.locks.Phase phaseOf(Member member) {
    lock.lock();
    try {
      return member.tenure == null ? member.phase : member.tenure.phase();
    } finally {
      lock.unlock();
    }
  }

  /** {@code member}'s lost reason, or null. */
  String lostReasonOf(Member member) {
    lock.lock();
    try {
      return member.tenure == null ? null : member.tenure.lostReason();
    } finally {
      lock.unlock();
    }
  }

  /** The node {@code member} holds, its owning session, token and check version, read together. */
  record Held(String node, long owner, long token, int version) {}

  /** What {@code member} holds, or null if it does not hold (any more). */
  Held heldBy(Member member) {
    lock.lock();
    try {
      return holder == member && member.tenure.isHolding()
          ? new Held(node, owner, member.token, member.version)
          : null;
    } finally {
      lock.unlock();
    }
  }

  /**
   * What {@code member} holds, recording that it hands out checks of its version (the next handoff
   * then writes the node first); null if it does not hold (any more).
   */
  Held takeChecks(Member member) {
    lock.lock();
    try {
      if (holder != member || !member.tenure.isHolding() || member.version < 0) {
        return null;
      }
      checksTaken(member);
      return new Held(node, owner, member.token, member.version);
    } finally {
      lock.unlock();
    }
  }

  /** The place's node and owner as {@code member} knew them (also once lost), or null. */
  Held lastHeldBy(Member member) {
    lock.lock();
    try {
      return member.tenure == null ? null : new Held(node, owner, member.token, member.version);
    } finally {
      lock.unlock();
    }
  }

  @GuardedBy("lock")
  private void dispatch(PlaceEvent event, List<PlaceStep> steps) {
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
      if (changed.place() == place && phase != Phase.NONE) {
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

  @GuardedBy("lock")
  private void join(Member member, List<PlaceStep> steps) {
    waiting.add(member);
    if (phase == Phase.NONE) {
      take(steps);
    } else if (phase == Phase.HELD || placeDecided) {
      decide(member, steps); // someone holds: a zero budget has its answer
    }
  }

  @GuardedBy("lock")
  private void withdraw(Member member, List<PlaceStep> steps) {
    if (!waiting.remove(member)) {
      return; // granted, failed or withdrawn first: its phase says which
    }
    member.phase = io.lockstep.recipes.locks.Phase.WITHDRAWN;
    boolean unwanted = waiting.isEmpty() && holder == null;
    if (unwanted && phase == Phase.TAKING) {
      phase = Phase.NONE;
      steps.add(new PlaceStep.WithdrawPlace(place, member));
      steps.add(new PlaceStep.Ended(member, null, true));
      return;
    }
    steps.add(new PlaceStep.Ended(member, null, false)); // a held place's answer decides
  }

  @GuardedBy("lock")
  private void release(PlaceEvent.Release release, List<PlaceStep> steps) {
    Member member = release.member();
    if (member.tenure == null) {
      throw new IllegalStateException("release of an attempt never granted: " + member.phase);
    }
    String lost = member.tenure.lostBeforeRelease();
    if (!member.tenure.release()) {
      steps.add(new PlaceStep.Complete(release.done())); // released before
      return;
    }
    refuseFence(member, notHolding(member), steps); // another thread's ask cannot be served now
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
    steps.add(new PlaceStep.Released(member, member.token, lost, done));
    if (bound.reached(member.maxInARow) && !bound.checking) {
      check(steps); // sent at the grant already; here so that no path can strand the place
    }
    if (fence.checksTaken && fence.write == 0) {
      write(false, steps); // the checks handed out must fail before anyone else holds
    }
    resume(false, steps);
  }

  // ---- the place's attempt ----

  @GuardedBy("lock")
  private void take(List<PlaceStep> steps) {
    place++;
    phase = Phase.TAKING;
    placeDecided = false;
    bound.reset();
    steps.add(new PlaceStep.Take(place));
  }

  @GuardedBy("lock")
  private void placeDecided(int decided, List<PlaceStep> steps) {
    if (decided != place || phase != Phase.TAKING) {
      return;
    }
    placeDecided = true;
    for (Member member : waiting) {
      decide(member, steps);
    }
  }

  @GuardedBy("lock")
  private void decide(Member member, List<PlaceStep> steps) {
    if (!member.decided) {
      member.decided = true;
      steps.add(new PlaceStep.Decided(member));
    }
  }

  @GuardedBy("lock")
  private void placeGranted(PlaceEvent.PlaceGranted granted, List<PlaceStep> steps) {
    if (granted.place() != place || phase != Phase.TAKING) {
      return; // withdrawn meanwhile: the withdrawal releases a grant that raced it
    }
    phase = Phase.HELD;
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
    Member first = waiting.poll();
    first.token = fence.token; // the first member of a place keeps the grant's token
    first.version = fence.version;
    fence.tokenTaken = true;
    grant(first, steps);
  }

  @GuardedBy("lock")
  private void placeEnded(PlaceEvent.PlaceEnded ended, List<PlaceStep> steps) {
    if (ended.place() != place || phase != Phase.TAKING) {
      return; // withdrawn by us: nothing waits for it
    }
    phase = Phase.NONE;
    for (Member member : waiting) {
      member.phase = io.lockstep.recipes.locks.Phase.FAILED;
      steps.add(new PlaceStep.Ended(member, ended.failure(), false));
    }
    waiting.clear();
  }

  @GuardedBy("lock")
  private void placeChanged(PlaceEvent.PlaceChanged changed, List<PlaceStep> steps) {
    if (changed.place() != place || phase != Phase.HELD) {
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
  @GuardedBy("lock")
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

  @GuardedBy("lock")
  private void giveBackAndRetake(CompletableFuture<Void> done, List<PlaceStep> steps) {
    giveBack(done, steps);
    if (!waiting.isEmpty()) {
      take(steps);
    }
  }

  @GuardedBy("lock")
  private void giveBack(CompletableFuture<Void> done, List<PlaceStep> steps) {
    phase = Phase.NONE;
    steps.add(new PlaceStep.GiveBack(place, done));
  }

  // ---- handing on ----

  /** The next waiter holds, unless the handoff must wait, or the place must go back. */
  @GuardedBy("lock")
  private void resume(boolean placeLost, List<PlaceStep> steps) {
    if (phase != Phase.HELD || holder != null || bound.checking || fence.write != 0) {
      return;
    }
    if (placeLost || waiting.isEmpty() || bound.mustGiveBack(bound.lastMax)) {
      giveBackAndRetake(null, steps);
      return;
    }
    Member next = waiting.poll();
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

  @GuardedBy("lock")
  private void grant(Member member, List<PlaceStep> steps) {
    holder = member;
    member.tenure = new Tenure(!atRisk);
    member.decided = true;
    steps.add(new PlaceStep.Grant(member, member.token, atRisk));
  }

  @GuardedBy("lock")
  private void check(List<PlaceStep> steps) {
    bound.checking = true;
    steps.add(new PlaceStep.CheckQueue(place));
  }

  @GuardedBy("lock")
  private void queueChecked(PlaceEvent.QueueChecked checked, List<PlaceStep> steps) {
    if (checked.place() != place || phase != Phase.HELD || !bound.checking) {
      return; // given back or lost meanwhile
    }
    bound.checked(checked.alone());
    resume(checked.placeLost(), steps);
  }

  // ---- fencing ----

  @GuardedBy("lock")
  private void fenceAsked(PlaceEvent.FenceAsked asked, List<PlaceStep> steps) {
    Member member = asked.member();
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

  @GuardedBy("lock")
  private void checksTaken(Member member) {
    if (holder == member && member.version == fence.version) {
      fence.checksTaken = true;
    }
  }

  @GuardedBy("lock")
  private void write(boolean forHolder, List<PlaceStep> steps) {
    fence.write = ++fence.writes;
    fence.forHolder = forHolder;
    steps.add(new PlaceStep.Write(place, fence.write));
  }

  @GuardedBy("lock")
  private void fenceWritten(PlaceEvent.FenceWritten written, List<PlaceStep> steps) {
    if (written.place() != place || phase != Phase.HELD || !fence.isOut(written.write())) {
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

  @GuardedBy("lock")
  private void fenceFailed(PlaceEvent.FenceFailed failed, List<PlaceStep> steps) {
    if (failed.place() != place || phase != Phase.HELD || !fence.isOut(failed.write())) {
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

  @GuardedBy("lock")
  private void refuseFence(Member member, RuntimeException failure, List<PlaceStep> steps) {
    if (member.fencePending) {
      member.fencePending = false;
      steps.add(new PlaceStep.FenceRefused(member, failure));
    }
  }

  /** Why {@code member} gets no fence; the member words it for its caller. */
  private static RuntimeException notHolding(Member member) {
    if (member.tenure != null && member.tenure.phase() == io.lockstep.recipes.locks.Phase.LOST) {
      return new LockOwnershipLostException(member.tenure.lostReason());
    }
    return new IllegalStateException("this hold was let go");
  }
}

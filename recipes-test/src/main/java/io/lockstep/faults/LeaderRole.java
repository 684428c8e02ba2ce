package io.lockstep.faults;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.Leadership;
import io.lockstep.recipes.leader.LeadershipListener;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.LockPart;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A worker's participant in the group's {@link LeaderElection}, for the worker's whole life. It
 * waits for leadership in rounds of {@code awaitLeadership(250 ms)}; while it leads it writes under
 * its epoch, and after a random term (chosen when elected, and reported with the grant) it steps
 * down ({@link Leadership#close()}), so leadership moves. Each leadership is a hold in the events:
 * {@code granted} on {@code elected}, {@code state} on {@code atRisk}, {@code restored} and a
 * {@code lost} that was a loss, {@code end} when it ends.
 */
final class LeaderRole implements Runnable, LeadershipListener {
  static final String THREAD = "L";
  private static final int AWAIT_MS = 250;

  /** One leadership as the events know it. */
  private static final class Term implements HoldState {
    final String holdKey;
    final long epoch;
    final int plannedMs;
    volatile LockState last = LockState.HELD;
    volatile long restoredAt = Long.MIN_VALUE;
    final AtomicBoolean ended = new AtomicBoolean();

    Term(String holdKey, long epoch, int plannedMs) {
      this.holdKey = holdKey;
      this.epoch = epoch;
      this.plannedMs = plannedMs;
    }

    @Override
    public LockState state() {
      return last;
    }

    @Override
    public boolean restoredSince(long nanos) {
      return restoredAt != Long.MIN_VALUE && restoredAt - nanos >= 0;
    }
  }

  private final RoleContext context;
  private final Random random;
  private final String parts;
  private final List<WriteTarget> targets;
  private final HoldLoop loop;
  private final LeaderElection election;
  private final Map<Leadership, CompletableFuture<Term>> terms = new ConcurrentHashMap<>();
  private int holds; // written by the election's listener thread, one callback at a time

  LeaderRole(RoleContext context) {
    this.context = context;
    this.random = context.random(0);
    WorkerSpec spec = context.spec;
    String name = spec.locks().get(0);
    this.parts = RoleContext.encodeParts(List.of(LockPart.mutex(spec.realLockPath(name))));
    this.targets = List.of(WriteTarget.exclusive(spec, name));
    this.loop = new HoldLoop(context.events, THREAD, spec.pacing());
    this.election =
        LeaderElection.builder(context.client, spec.clientPath(spec.realLockPath(name)))
            .participantId("worker-" + spec.worker())
            .build();
    election.addListener(this);
  }

  @Override
  public void run() {
    try {
      context.events.send("want", THREAD, -1);
      election.start();
      while (!context.quiescing()) {
        long mark = context.connection.mark();
        CallWatch.Call call = context.calls.watch(THREAD, AWAIT_MS);
        Optional<Leadership> next = election.awaitLeadership(Duration.ofMillis(AWAIT_MS));
        context.attempt(
            THREAD,
            next.isPresent() ? RoleContext.Outcome.ACQUIRED : RoleContext.Outcome.TIMED_OUT,
            call.end(),
            AWAIT_MS,
            mark);
        if (next.isPresent()) {
          lead(next.get());
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      context.events.error(THREAD, e);
    } finally {
      long start = System.nanoTime();
      election.close();
      context.events.send("released", THREAD, "close", System.nanoTime() - start);
      context.events.send("idle", THREAD);
    }
  }

  private void lead(Leadership leadership) throws InterruptedException {
    Term term;
    try {
      term = future(leadership).get(2, TimeUnit.SECONDS);
    } catch (TimeoutException | ExecutionException e) {
      context.events.error(THREAD, new IllegalStateException("not told elected within 2 s", e));
      return;
    }
    if (term.epoch != 0) {
      loop.hold(
          term.holdKey,
          term.plannedMs,
          () ->
              context.writes.write(
                  THREAD, term.holdKey, targets, term.epoch, leadership::ownershipChecks),
          term);
    }
    if (term.ended.compareAndSet(false, true)) {
      context.events.send("end", THREAD, term.holdKey);
      long start = System.nanoTime();
      leadership.close();
      context.events.send("released", THREAD, term.holdKey, System.nanoTime() - start);
    }
    terms.remove(leadership);
    context.events.send("want", THREAD, -1);
  }

  private CompletableFuture<Term> future(Leadership leadership) {
    return terms.computeIfAbsent(leadership, l -> new CompletableFuture<>());
  }

  /** The term of {@code leadership} if it was reported elected and still leads, else null. */
  private Term known(Leadership leadership) {
    CompletableFuture<Term> future = terms.get(leadership);
    return future == null ? null : future.getNow(null);
  }

  @Override
  public void elected(Leadership leadership) {
    String holdKey = context.spec.worker() + "." + THREAD + "." + ++holds;
    long epoch;
    try {
      epoch = leadership.fencingToken();
    } catch (RuntimeException lostAlready) {
      epoch = 0;
    }
    long session = Sessions.id(context.client);
    boolean counting = epoch != 0 && session != 0 && leadership.state() == LockState.HELD;
    int planned = context.spec.pacing().hold(random);
    context.events.send(
        "granted",
        THREAD,
        holdKey,
        epoch,
        Long.toHexString(session),
        counting ? 1 : 0,
        planned,
        parts,
        1);
    Term term = new Term(holdKey, epoch, planned);
    if (leadership.state() != LockState.HELD) {
      term.last = leadership.state();
      context.events.send("state", THREAD, holdKey, term.last);
    }
    future(leadership).complete(term);
  }

  @Override
  public void atRisk(Leadership leadership) {
    Term term = known(leadership);
    if (term != null) {
      term.last = LockState.AT_RISK;
      context.events.send("state", THREAD, term.holdKey, LockState.AT_RISK);
    }
  }

  @Override
  public void restored(Leadership leadership) {
    Term term = known(leadership);
    if (term != null) {
      term.restoredAt = System.nanoTime();
      term.last = LockState.HELD;
      context.events.send("state", THREAD, term.holdKey, LockState.HELD);
    }
  }

  @Override
  public void lost(Leadership leadership) {
    Term term = known(leadership);
    if (term == null) {
      return;
    }
    if (leadership.state() == LockState.LOST) {
      term.last = LockState.LOST;
      context.events.send("state", THREAD, term.holdKey, LockState.LOST);
    }
    if (term.ended.compareAndSet(false, true)) {
      context.events.send("end", THREAD, term.holdKey);
    }
  }
}

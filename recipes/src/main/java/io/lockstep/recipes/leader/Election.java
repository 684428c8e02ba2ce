package io.lockstep.recipes.leader;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.Awaits;
import io.lockstep.recipes.internal.engine.Guarded;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.engine.Outbox;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockStateListener;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One participant of a {@link LeaderElection}: at most one attempt in the queue or one term of
 * leadership at a time, a new attempt after every term and every failure while started, and the
 * listeners' callbacks in order.
 *
 * <p>The rules are {@link ElectionMachine}'s; this class feeds it the attempts' and holds' news
 * under its lock and carries its steps out in order after unlocking ({@link Outbox}): it starts and
 * releases attempts, makes the {@link Term}s, tells the listeners and completes the futures. The
 * one step that waits, a close's withdrawal and release, runs in the closing caller's thread.
 */
final class Election {
  private static final Logger log = LoggerFactory.getLogger(Election.class);

  /*
   * A revocation handler that does nothing: with one, the engine reads our node before each grant
   * (as Curator's latch does before it leads), so a waiter whose node an operator deleted is not
   * elected on the leader's deletion beside the next participant, with the same epoch.
   */
  private static final Runnable CONFIRM_BEFORE_GRANT = () -> {};

  private final CuratorFramework client;
  private final String path;
  private final LeaderLayout layout;
  private final LockSettings settings;
  private final AttemptFactory attempts;
  private final List<Slot> slots;
  private final Executor background;
  private final Announcer announcer;
  private final LockStateListener stateListener =
      change -> on(new ElectionEvent.StateChanged(change.fencingToken(), change.state()));
  private final Guarded<ElectionMachine> machine = new Guarded<>(new ElectionMachine());

  private final Outbox<ElectionStep> outbox = new Outbox<>(this::run);
  private final Map<Integer, Attempt> started = new ConcurrentHashMap<>(); // by the machine's ids
  private final Map<Integer, Term> terms = new ConcurrentHashMap<>();
  // Set by the first close once it let go: completes when the nodes it let go are deleted.
  private final CompletableFuture<CompletableFuture<Void>> nodesGone = new CompletableFuture<>();

  Election(CuratorFramework client, String path, String id, LeaderLayout layout) {
    this.client = client;
    this.path = path;
    this.layout = layout;
    this.settings = LockSettings.of(client, path, "LeaderElection");
    this.attempts = AttemptFactory.plain(settings);
    this.slots = Slot.of(path, layout.driver(), layout.nodeData(id)).alone();
    this.background = settings.scheduler()::execute;
    this.announcer = new Announcer(path, settings.scheduler());
  }

  void start() {
    boolean drain =
        machine.apply(
            m -> {
              checkNotClosed(m);
              if (m.stage() == ElectionMachine.Stage.STARTED) {
                throw new IllegalStateException(
                    "LeaderElection on " + path + " was already started");
              }
              settings.listeners().addListener(stateListener);
              return post(m.on(new ElectionEvent.Start()));
            });
    if (drain) {
      outbox.drain();
    }
  }

  /**
   * Leaves the election: withdraws the attempt or gives up the term, and waits for their nodes to
   * go, bounded while connected. A close while another runs waits for the same nodes, in its own
   * thread.
   */
  void close() {
    ElectionStep.Leave leave = null;
    for (ElectionStep step : on(new ElectionEvent.Close(new CompletableFuture<>()))) {
      if (step instanceof ElectionStep.Leave l) {
        leave = l;
      }
    }
    if (leave == null) { // closed before, or now in another thread
      Awaits.whileConnected(nodesGone.join(), settings);
      return;
    }
    CompletableFuture<Void> gone = CompletableFuture.completedFuture(null);
    try {
      gone = letGo(leave);
    } finally {
      nodesGone.complete(gone);
    }
    Awaits.whileConnected(gone, settings);
    settings.listeners().removeListener(stateListener);
  }

  /**
   * Withdraws the attempt and releases the term {@code leave} names (a term given up meanwhile is
   * its giver's to release), without waiting for ZooKeeper.
   *
   * @return completes once their nodes are deleted
   */
  private CompletableFuture<Void> letGo(ElectionStep.Leave leave) {
    leave.reached().join(); // the steps before it ran: the attempt it names was started
    CompletableFuture<Void> withdrawing = CompletableFuture.completedFuture(null);
    Attempt withdrawn = started.remove(leave.attempt());
    if (withdrawn != null) {
      withdrawing =
          withdrawn.withdraw(AcquireOutcome.WITHDRAWN) == Attempt.Outcome.GRANTED
              ? withdrawn.releaseAsync() // granted while we withdrew: nobody took it
              : withdrawn.cleanedUp();
    }
    Term term = terms.get(leave.term()); // kept: a term given up is told lost once its node goes
    return term == null ? withdrawing : CompletableFuture.allOf(withdrawing, term.releaseAsync());
  }

  /**
   * A term given up by its holder: the node goes, the next participant leads, we queue again. A
   * term given up before, or taken by the election's close, is not given up twice: this waits for
   * its node to go as the first did.
   */
  void relinquish(Term term) {
    if (!term.markClosed()) {
      term.releaseNode();
      return;
    }
    on(new ElectionEvent.Relinquish(term.id()));
    term.releaseNode(); // in the caller's thread, bounded as a release is
    on(new ElectionEvent.Released(term.id()));
  }

  boolean isLeader() {
    return machine.apply(
        m -> {
          Term term = terms.get(m.leader());
          return term != null && term.state() == LockState.HELD;
        });
  }

  Optional<Leadership> leadership() {
    return machine.apply(m -> Optional.ofNullable(holding(m)));
  }

  /**
   * Our node: the holding term's, else the queued attempt's once created and until lost; empty when
   * there is none, and before start and after close.
   */
  Optional<String> nodePath() {
    return machine.apply(
        m -> {
          if (m.stage() != ElectionMachine.Stage.STARTED) {
            return Optional.empty();
          }
          Term term = holding(m);
          return term != null ? term.nodePath() : Term.nodeOf(started.get(m.waiting()));
        });
  }

  /** The current term if it holds (or may, at risk), else the next one. */
  CompletableFuture<Leadership> leadershipAsync() {
    return machine.apply(
        m -> {
          checkNotClosed(m);
          if (m.stage() == ElectionMachine.Stage.LATENT) {
            throw new IllegalStateException("LeaderElection on " + path + " was not started");
          }
          Term term = holding(m);
          return term != null ? term.announced().copy() : m.next().copy();
        });
  }

  /** The participants in queue order, read as Curator reads them; the first found leads. */
  List<Participant> participants() {
    machine.apply(this::checkNotClosed);
    return Participants.read(client, path, layout.driver());
  }

  void addListener(LeadershipListener listener) {
    machine.apply(
        m -> {
          checkNotClosed(m);
          announcer.add(listener);
          return null;
        });
  }

  void removeListener(LeadershipListener listener) {
    announcer.remove(listener);
  }

  String path() {
    return path;
  }

  IllegalStateException closedException() {
    return new IllegalStateException("LeaderElection on " + path + " was closed");
  }

  /** The leader's term if it holds (or may, at risk); call under the machine's lock. */
  private Term holding(ElectionMachine m) {
    Term term = terms.get(m.leader());
    if (term == null) {
      return null;
    }
    LockState state = term.state();
    return state == LockState.HELD || state == LockState.AT_RISK ? term : null;
  }

  /** Throws if the election was closed; call under the machine's lock. */
  private Void checkNotClosed(ElectionMachine m) {
    if (m.stage() == ElectionMachine.Stage.CLOSED) {
      throw closedException();
    }
    return null;
  }

  // ---- the machine and its steps ----

  /** Feeds {@code event} to the machine and carries out its steps; returns them. */
  private List<ElectionStep> on(ElectionEvent event) {
    return on(m -> m.on(event));
  }

  /**
   * Reads a new term's hold and tells the machine if it is not HELD, in one turn of the machine's
   * lock. The engine changes a hold's state before its notice goes out, so a notice the machine
   * took before this read is no newer than what it reads, and any newer one comes after: read
   * outside the lock, an AT_RISK read just before the connection came back could land after the
   * notice of HELD, and the term stayed at risk with its connection up.
   */
  private void check(Term term) {
    on(
        m -> {
          LockState state = term.attemptState();
          return state == LockState.HELD
              ? List.of()
              : m.on(new ElectionEvent.StateChanged(term.epoch(), state));
        });
  }

  /**
   * Feeds the machine under its lock by {@code decide}, then carries out its steps; returns them.
   */
  private List<ElectionStep> on(Function<ElectionMachine, List<ElectionStep>> decide) {
    List<ElectionStep> steps = new ArrayList<>();
    boolean drain =
        machine.apply(
            m -> {
              steps.addAll(decide.apply(m));
              return post(steps);
            });
    if (drain) {
      outbox.drain();
    }
    return steps;
  }

  /**
   * Under the machine's lock: makes the terms {@code steps} start (no I/O: the machine's leader is
   * a term from now on) and queues the steps in the order decided.
   *
   * @return whether the caller must drain the outbox once it has unlocked
   */
  private boolean post(List<ElectionStep> steps) {
    boolean drain = false;
    for (ElectionStep step : steps) {
      if (step instanceof ElectionStep.NewTerm term) {
        newTerm(term);
      }
      drain |= outbox.add(step);
    }
    return drain;
  }

  /** Carries out one step (a new term was made under the lock); none blocks. */
  private void run(ElectionStep step) {
    if (step instanceof ElectionStep.Enqueue enqueue) {
      enqueue(enqueue.attempt());
    } else if (step instanceof ElectionStep.Release release) {
      var unused = started.remove(release.attempt()).releaseAsync();
    } else if (step instanceof ElectionStep.CheckTerm check) {
      check(terms.get(check.term()));
    } else if (step instanceof ElectionStep.Tell tell) {
      tell(tell.news(), terms.get(tell.term()));
    } else if (step instanceof ElectionStep.TermLost lost) {
      terms.get(lost.term()).lost();
    } else if (step instanceof ElectionStep.TermClosed closed) {
      terms.get(closed.term()).markClosed();
    } else if (step instanceof ElectionStep.Complete complete) {
      Term term = terms.get(complete.term());
      announcer.execute( // after the listeners heard ELECTED, told just before
          () -> {
            term.announced().complete(term);
            complete.next().complete(term);
          });
    } else if (step instanceof ElectionStep.Fail fail) {
      fail(fail);
    } else if (step instanceof ElectionStep.RetryLater retry) {
      log.info(
          "LeaderElection on {} could not enter the queue ({}); again in {} ms",
          path,
          retry.failure(),
          retry.delayMillis());
      settings.scheduler().schedule(retry.delayMillis(), () -> on(new ElectionEvent.RetryDue()));
    } else if (step instanceof ElectionStep.Leave leave) {
      leave.reached().complete(null); // the closing caller withdraws and releases, in its thread
    }
  }

  /** Under the machine's lock. */
  private void newTerm(ElectionStep.NewTerm term) {
    int id = term.term();
    terms.put(id, new Term(this, id, started.remove(id), term.epoch()));
    terms.keySet().removeIf(older -> older != id); // every older term was told lost before
  }

  /** Starts attempt {@code id}; its end is heard on a scheduler thread. */
  private void enqueue(int id) {
    Attempt attempt;
    try {
      attempt = attempts.start(slots, CONFIRM_BEFORE_GRANT);
    } catch (RuntimeException e) {
      on(new ElectionEvent.Failed(id, e, clientClosed()));
      return;
    }
    started.put(id, attempt);
    var unused =
        attempt
            .grantedFuture()
            .whenCompleteAsync((v, failure) -> on(ended(id, attempt, failure)), background);
  }

  /** How the attempt ended, read outside the lock. */
  private ElectionEvent ended(int id, Attempt attempt, Throwable failure) {
    if (failure != null) {
      started.remove(id);
      return new ElectionEvent.Failed(id, failure, clientClosed());
    }
    try {
      return new ElectionEvent.Granted(id, attempt.checkedFencingToken());
    } catch (LockOwnershipLostException lostAlready) {
      return new ElectionEvent.GrantedLost(id);
    }
  }

  private boolean clientClosed() {
    return client.getState() == CuratorFrameworkState.STOPPED;
  }

  private void tell(ElectionStep.News news, Term term) {
    switch (news) {
      case ELECTED -> announcer.tell(listener -> listener.elected(term));
      case AT_RISK -> announcer.tell(listener -> listener.atRisk(term));
      case RESTORED -> announcer.tell(listener -> listener.restored(term));
      case LOST -> announcer.tell(listener -> listener.lost(term));
    }
  }

  private void fail(ElectionStep.Fail fail) {
    IllegalStateException why;
    if (fail.ending() == ElectionStep.Ending.CLIENT_CLOSED) {
      log.warn("LeaderElection on {} stops: its client was closed", path);
      why = new IllegalStateException("The client of LeaderElection on " + path + " was closed");
    } else {
      why = closedException();
    }
    announcer.execute(() -> fail.next().completeExceptionally(why));
  }
}

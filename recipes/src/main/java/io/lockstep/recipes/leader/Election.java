package io.lockstep.recipes.leader;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.Awaits;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.engine.Phase;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockStateChange;
import io.lockstep.recipes.locks.LockStateListener;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of one {@link LeaderElection}: at most one attempt in the queue or one term of
 * leadership at a time, a new attempt after every term and every failure while started, and the
 * listeners' callbacks in order.
 */
final class Election {
  /*
   * Algorithm notes. Invariants (under lock): while STARTED, exactly one of these holds: `waiting`
   * is the attempt in the queue, `leader` the granted term, or a retry is scheduled. Once CLOSED,
   * none starts again. Callbacks are queued under the lock, so they run in the order of the
   * changes: elected, at risk / restored, lost, elected...
   *
   * Repeatedly:
   *   enqueue: start an attempt (the engine creates the protected node, waits for the head);
   *   granted (on a scheduler thread): the term starts, its epoch the attempt's fencing token;
   *   the lock's state listener maps AT_RISK, HELD again and LOST of the term (matched by epoch)
   *     to atRisk, restored, lost; a lost term is cleared and the election enqueues again;
   *   Leadership.close(): delete the node (bounded), announce lost, enqueue again;
   *   attempt failed: retry after a bounded backoff on the scheduler, unless the client closed.
   */
  private static final Logger log = LoggerFactory.getLogger(Election.class);

  /*
   * A revocation handler that does nothing: with one, the engine reads our node before each grant
   * (as Curator's latch does before it leads), so a waiter whose node an operator deleted is not
   * elected on the leader's deletion beside the next participant, with the same epoch.
   */
  private static final Runnable CONFIRM_BEFORE_GRANT = () -> {};

  private enum Stage {
    LATENT,
    STARTED,
    CLOSED
  }

  private final CuratorFramework client;
  private final String path;
  private final LeaderLayout layout;
  private final LockSettings settings;
  private final AttemptFactory attempts;
  private final List<Slot> slots;
  private final Executor background;
  private final Announcer announcer;
  private final LockStateListener stateListener = this::onStateChange;
  private final ReentrantLock lock = new ReentrantLock();

  /** Where the election stands; LATENT until start, CLOSED for good. */
  @GuardedBy("lock")
  private Stage stage = Stage.LATENT;

  /** The attempt in the queue, not granted yet; null while leading or between attempts. */
  @GuardedBy("lock")
  private Attempt waiting;

  /** The current term, from its grant until it is lost or given up; else null. */
  @GuardedBy("lock")
  private Term leader;

  /** Completes with the next term; replaced once completed. Failed when the election closes. */
  @GuardedBy("lock")
  private CompletableFuture<Leadership> next = new CompletableFuture<>();

  /** The delays after failed attempts in a row; reset by a grant. */
  @GuardedBy("lock")
  private final Backoff backoff = new Backoff();

  Election(CuratorFramework client, String path, String id, LeaderLayout layout) {
    this.client = client;
    this.path = path;
    this.layout = layout;
    this.settings = LockSettings.of(client, path, "LeaderElection");
    this.attempts = AttemptFactory.plain(settings);
    this.slots = List.of(Slot.of(path, layout.driver(), layout.nodeData(id)));
    this.background = settings.scheduler()::execute;
    this.announcer = new Announcer(path, settings.scheduler());
  }

  void start() {
    lock.lock();
    try {
      checkNotClosed();
      if (stage == Stage.STARTED) {
        throw new IllegalStateException("LeaderElection on " + path + " was already started");
      }
      stage = Stage.STARTED;
      settings.listeners().addListener(stateListener);
      enqueue();
    } finally {
      lock.unlock();
    }
  }

  /** Leaves the election: withdraws the attempt or gives up the term, bounded while connected. */
  void close() {
    Attempt withdrawn;
    Term term;
    CompletableFuture<Leadership> pending;
    lock.lock();
    try {
      if (stage == Stage.CLOSED) {
        return;
      }
      stage = Stage.CLOSED;
      withdrawn = waiting;
      waiting = null;
      term = leader;
      leader = null;
      pending = next;
      if (term != null) {
        term.markClosed();
        announcer.tell(listener -> listener.lost(term));
      }
      IllegalStateException closed = closedException();
      announcer.execute(() -> pending.completeExceptionally(closed));
    } finally {
      lock.unlock();
    }
    if (withdrawn != null) {
      if (withdrawn.withdraw(AcquireOutcome.WITHDRAWN) == Attempt.Outcome.GRANTED) {
        withdrawn.release(); // granted while we withdrew: nobody took it
      } else {
        Awaits.whileConnected(withdrawn.cleanedUp(), settings);
      }
    }
    if (term != null) {
      term.releaseNode();
    }
    settings.listeners().removeListener(stateListener);
  }

  /** A term given up by its holder: the node goes, the next participant leads, we queue again. */
  void relinquish(Term term) {
    if (!term.markClosed()) {
      return;
    }
    boolean wasLeader;
    lock.lock();
    try {
      wasLeader = leader == term;
      if (wasLeader) {
        leader = null;
      }
    } finally {
      lock.unlock();
    }
    term.releaseNode();
    if (wasLeader) {
      lock.lock();
      try {
        announcer.tell(listener -> listener.lost(term));
        if (stage == Stage.STARTED && waiting == null && leader == null) {
          enqueue();
        }
      } finally {
        lock.unlock();
      }
    }
  }

  boolean isLeader() {
    lock.lock();
    try {
      return leader != null && leader.state() == LockState.HELD;
    } finally {
      lock.unlock();
    }
  }

  Optional<Leadership> leadership() {
    lock.lock();
    try {
      return Optional.ofNullable(holding());
    } finally {
      lock.unlock();
    }
  }

  /** The current term if it holds (or may, at risk), else the next one. */
  CompletableFuture<Leadership> leadershipAsync() {
    lock.lock();
    try {
      checkNotClosed();
      if (stage == Stage.LATENT) {
        throw new IllegalStateException("LeaderElection on " + path + " was not started");
      }
      Term term = holding();
      return term != null ? CompletableFuture.completedFuture(term) : next.copy();
    } finally {
      lock.unlock();
    }
  }

  /** The participants in queue order, read as Curator reads them; the first found leads. */
  List<Participant> participants() {
    lock.lock();
    try {
      checkNotClosed();
    } finally {
      lock.unlock();
    }
    return Participants.read(client, path, layout.driver());
  }

  void addListener(LeadershipListener listener) {
    lock.lock();
    try {
      checkNotClosed();
      announcer.add(listener);
    } finally {
      lock.unlock();
    }
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

  // ---- the queue ----

  @GuardedBy("lock")
  private Term holding() {
    Term term = leader;
    if (term == null) {
      return null;
    }
    LockState state = term.state();
    return state == LockState.HELD || state == LockState.AT_RISK ? term : null;
  }

  @GuardedBy("lock")
  private void checkNotClosed() {
    if (stage == Stage.CLOSED) {
      throw closedException();
    }
  }

  /** Starts the next attempt; its end is heard on a scheduler thread. */
  @GuardedBy("lock")
  private void enqueue() {
    Attempt attempt;
    try {
      attempt = attempts.start(slots, CONFIRM_BEFORE_GRANT);
    } catch (RuntimeException e) {
      failed(e);
      return;
    }
    waiting = attempt;
    var unused =
        attempt
            .grantedFuture()
            .whenCompleteAsync((v, failure) -> onAttemptEnded(attempt, failure), background);
  }

  private void onAttemptEnded(Attempt attempt, Throwable failure) {
    lock.lock();
    try {
      if (waiting != attempt) {
        return; // withdrawn by close(), which releases a grant that raced it
      }
      waiting = null;
      if (failure != null) {
        failed(failure);
        return;
      }
      long epoch;
      try {
        epoch = attempt.checkedFencingToken();
      } catch (LockOwnershipLostException lostAlready) {
        var unused = attempt.releaseAsync();
        enqueue();
        return;
      }
      Term term = new Term(this, attempt, epoch);
      leader = term;
      backoff.reset();
      CompletableFuture<Leadership> won = next;
      next = new CompletableFuture<>();
      announcer.tell(listener -> listener.elected(term));
      announcer.execute(() -> won.complete(term));
      Phase phase = attempt.phase();
      if (phase == Phase.AT_RISK) {
        term.reported(LockState.AT_RISK);
        announcer.tell(listener -> listener.atRisk(term));
      } else if (phase == Phase.LOST) {
        endLost(term);
      }
    } finally {
      lock.unlock();
    }
  }

  /** An attempt failed: retry after a backoff while started, unless the client is closed. */
  @GuardedBy("lock")
  private void failed(Throwable failure) {
    if (stage != Stage.STARTED) {
      return;
    }
    if (client.getState() == CuratorFrameworkState.STOPPED) {
      log.warn("LeaderElection on {} stops: its client was closed", path);
      CompletableFuture<Leadership> pending = next;
      next = new CompletableFuture<>();
      IllegalStateException stopped =
          new IllegalStateException("The client of LeaderElection on " + path + " was closed");
      announcer.execute(() -> pending.completeExceptionally(stopped));
      return;
    }
    long delay = backoff.next();
    log.info(
        "LeaderElection on {} could not enter the queue ({}); again in {} ms",
        path,
        failure,
        delay);
    settings.scheduler().schedule(delay, this::retry);
  }

  private void retry() {
    lock.lock();
    try {
      if (stage == Stage.STARTED && waiting == null && leader == null) {
        enqueue();
      }
    } finally {
      lock.unlock();
    }
  }

  /** A change of a hold of our queue, on its notifier's thread: only the current term's count. */
  private void onStateChange(LockStateChange change) {
    lock.lock();
    try {
      Term term = leader;
      if (term == null || term.epoch() != change.fencingToken()) {
        return;
      }
      switch (change.state()) {
        case AT_RISK:
          if (term.reported() != LockState.AT_RISK) {
            term.reported(LockState.AT_RISK);
            announcer.tell(listener -> listener.atRisk(term));
          }
          break;
        case HELD:
          if (term.reported() == LockState.AT_RISK) {
            term.reported(LockState.HELD);
            announcer.tell(listener -> listener.restored(term));
          }
          break;
        case LOST:
          endLost(term);
          break;
        default:
          break; // RELEASED: we let go ourselves, and said so
      }
    } finally {
      lock.unlock();
    }
  }

  @GuardedBy("lock")
  private void endLost(Term term) {
    leader = null;
    term.lost();
    announcer.tell(listener -> listener.lost(term));
    if (stage == Stage.STARTED) {
      enqueue();
    }
  }
}

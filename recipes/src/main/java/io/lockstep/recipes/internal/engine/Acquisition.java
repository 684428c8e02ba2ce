package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.internal.zk.ZkRequests;
import io.lockstep.recipes.locks.AcquireOutcome;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Consumer;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt to take a lock with a node of its own, and the hold it turns into: the engine every
 * recipe runs on.
 *
 * <p>{@link AcquisitionState} owns the state and decides; this class carries out its steps, in the
 * order they were decided ({@link Outbox}): it hands creates to the {@link Enqueuer}, reads the
 * queue, arms a {@link PredecessorWatch}, lets {@link OwnNodeReads} read our own node, the {@link
 * Janitor} clean up and the {@link Lifecycle} tell listeners, observers and the caller, keeps its
 * {@link QueuePlace} among this process's nodes, and passes the client's events ({@link
 * ClientEvents}) to the state. Nothing waits inside: ZooKeeper callbacks and watch events drive it,
 * and {@link #grantedFuture()} completes when the lock is held.
 */
public final class Acquisition implements Attempt, ClientEvents.Member {
  /*
   * Algorithm notes.
   *
   * Repeatedly (each arrow is a ZooKeeper callback or watch event feeding AcquisitionState):
   *   create our node(s) (one create, or one multi) -> its stat gives the czxid and the owning
   *     session; on a lost answer, find our node by its protection id;
   *   read the children (one getChildren, or one read-only multi, with the parents' pzxid; the
   *     first read of a single queue leaves a child watch if the lock's last read found no queue);
   *   judge (QueueJudge): hold, or watch node X with getData;
   *   X changed -> read again; X was the head of an append-only queue and is gone -> hold at
   *     once (a revocable lock first reads and watches its node with one getData).
   * The token is the larger of our czxid and the zxid at which the grant was decided (the read's
   *   pzxid, the deletion event's zxid): later than every earlier holder's last write.
   * Holding: our own node is watched once the hold has lasted its grace, unless the granting
   *   read's child watch is still armed (it fires at the queue's next change, and then the same).
   * Ending without a grant: the Janitor deletes our nodes, withdraws the watch, sweeps for a
   * create whose outcome is unknown; the blocking caller waits for that within a bound.
   *
   * Threads: callbacks and watch events run on ZooKeeper's event thread, connection events on
   * Curator's, timers on the Scheduler's, release and withdraw on the caller's; each only asks the
   * state and carries out non-blocking steps. User code (listeners, revocation) runs through the
   * Lifecycle's Notifier, on the Scheduler's threads, in order.
   */

  private static final Logger log = LoggerFactory.getLogger(Acquisition.class);

  private static final AtomicReferenceFieldUpdater<Acquisition, Janitor> JANITOR =
      AtomicReferenceFieldUpdater.newUpdater(Acquisition.class, Janitor.class, "janitor");
  private static final AtomicReferenceFieldUpdater<Acquisition, OwnNodeReads> HOLD_CHECKS =
      AtomicReferenceFieldUpdater.newUpdater(Acquisition.class, OwnNodeReads.class, "holdChecks");

  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<Acquisition, CompletableFuture> RELEASE_HEARD =
      AtomicReferenceFieldUpdater.newUpdater(
          Acquisition.class, CompletableFuture.class, "releaseHeard");

  private final LockSettings settings;
  private final AcquisitionState state;
  private final Runnable revocationHandler;
  private final PlaceHooks hooks;
  private final Enqueuer enqueuer;
  private final Watcher queueWatcher; // the child watch of a single queue's reads: one object

  @SuppressWarnings("unused") // through HOLD_CHECKS
  private volatile OwnNodeReads holdChecks; // made at the first read of our own node

  private final Lifecycle lifecycle;
  private final String queue; // its place among this process's nodes: see QueuePlace
  private final List<String> lockPaths;
  private final Outbox<Step> outbox = new Outbox<>(this::run);
  private final Consumer<StateEvent> events = this::on; // what answers and watch events go to

  @SuppressWarnings("unused") // through JANITOR
  private volatile Janitor janitor; // made at the first cleanup (a granted attempt needs none)

  private final CompletableFuture<Void> deleted = new Parking<>(); // at release

  // At release: a Lazy signal, given once listeners and observers heard RELEASED.
  @SuppressWarnings("unused") // through RELEASE_HEARD
  private volatile CompletableFuture<Void> releaseHeard;

  private Acquisition(
      LockSettings settings,
      List<Slot> slots,
      Runnable revocationHandler,
      PlaceHooks hooks,
      Observation carried) {
    this.settings = settings;
    this.revocationHandler = revocationHandler;
    this.hooks = hooks;
    this.lockPaths = Enqueuer.lockPaths(slots);
    this.queue = QueuePlace.of(settings, lockPaths);
    boolean watchFirstRead = QueuePlace.watchFirstRead(settings, queue);
    this.state =
        new AcquisitionState(
            new AcquisitionMachine(
                slots,
                settings.description(),
                revocationHandler != null,
                watchFirstRead,
                settings.retries(),
                settings.protectionIds(),
                settings.ownNodeWatchGraceNanos()));
    this.queueWatcher = OwnNodeReads.queueWatcher(events);
    Watcher firstReadWatch = watchFirstRead ? queueWatcher : null;
    this.enqueuer = new Enqueuer(settings, slots, lockPaths, firstReadWatch, events);
    this.lifecycle = new Lifecycle(settings, carried);
    if (hooks != null) {
      lifecycle.onChange(hooks::stateChanged);
    }
  }

  /**
   * Starts enqueuing in the given queues.
   *
   * @param revocationHandler run when a revocation is requested while held, or null if the lock is
   *     not revocable (a revocable lock watches its own node before the grant, as Curator's does)
   * @param hooks what a place shared by local holds hears of it, or null
   * @param carried the acquisition this attempt carries on for observers, or null for a new one
   */
  public static Acquisition start(
      LockSettings settings,
      List<Slot> slots,
      Runnable revocationHandler,
      PlaceHooks hooks,
      Observation carried) {
    if (slots.isEmpty()) {
      throw new IllegalArgumentException("an acquisition needs at least one queue");
    }
    Acquisition acquisition = new Acquisition(settings, slots, revocationHandler, hooks, carried);
    QueuePlace.active(settings, acquisition.queue, true);
    acquisition.lifecycle.started();
    if (settings.engine().events().join(acquisition)) {
      if (acquisition.state.start(acquisition.outbox)) {
        acquisition.outbox.drain();
      }
    } else {
      acquisition.on(new StateEvent.Closed()); // a closed client: fail at once, send nothing
    }
    return acquisition;
  }

  /** An answer or a watch event: to the state, and its step carried out. */
  void on(StateEvent event) {
    if (hooks != null && event instanceof StateEvent.QueueChanged) {
      hooks.queueChanged();
    }
    QueuePlace.heard(settings, queue, this, event);
    if (state.on(event, outbox)) {
      outbox.drain();
    }
  }

  /** Carries out one step of the state. */
  private void run(Step step) {
    if (step instanceof Step.Ignore) {
      return;
    } else if (step instanceof Step.Both both) {
      run(both.first());
      run(both.second());
    } else if (step instanceof Step.Create create) {
      enqueuer.create(create);
    } else if (step instanceof Step.CreateWithDirectories create) {
      enqueuer.createWithDirectories(create);
    } else if (step instanceof Step.FindOwnNode find) {
      enqueuer.findOwnNode(find);
    } else if (step instanceof Step.ReadQueue read) {
      readQueue(read.epoch(), read.watchQueue());
    } else if (step instanceof Step.Watch watch) {
      lifecycle.decided();
      PredecessorWatch.arm(settings.zk(), settings.engine(), state, events, watch);
    } else if (step instanceof Step.ReadOwnNode read) {
      holdChecks().readOwnNode(read);
    } else if (step instanceof Step.Verify verify) {
      holdChecks().verify(verify);
    } else if (step instanceof Step.Later later) {
      settings
          .scheduler()
          .schedule(later.delayMillis(), () -> on(new StateEvent.RetryDue(later.epoch())));
    } else if (step instanceof Step.WatchOwnNodeLater later) {
      settings
          .scheduler()
          .schedule(later.delayMillis(), () -> on(new StateEvent.OwnNodeWatchDue(later.epoch())));
    } else if (step instanceof Step.Grant grant) {
      lifecycle.granted(grant.token(), grant.atRisk());
      if (grant.revoke()) {
        revoke(); // asked for before we held: honoured right after the grant
      }
    } else if (step instanceof Step.Notify notice) {
      lifecycle.changed(notice.state(), notice.token(), notice.reason());
    } else if (step instanceof Step.Revoke) {
      revoke();
    } else if (step instanceof Step.End end) {
      end(end);
    } else if (step instanceof Step.Requeue requeue) {
      requeue(requeue);
    } else if (step instanceof Step.Tidy tidy) {
      QueuePlace.forget(settings, queue, this, tidy.cleanup().nodes());
      janitor().tidy(tidy.cleanup(), tidy.answersCreate());
    } else if (step instanceof Step.Release release) {
      released(release);
    } else if (step instanceof Step.Discard discard) {
      QueuePlace.forget(settings, queue, this, discard.nodes()); // the hold stays LOST
      var unused = settings.deletes().deleteGuaranteed(discard.nodes());
    } else {
      throw new IllegalStateException("unknown step " + step);
    }
  }

  private void readQueue(int e, boolean watchQueue) {
    Watcher childWatcher = watchQueue && lockPaths.size() == 1 ? queueWatcher : null;
    ZkRequests zk = settings.zk();
    Callbacks.when(
        zk.children(lockPaths, childWatcher),
        (children, error) -> {
          if (error == null) {
            on(
                new StateEvent.QueueRead(
                    e, children.lists(), zk.isConnected(), children.decidedAtZxid()));
          } else {
            on(new StateEvent.ReadFailed(e, error));
          }
        });
  }

  private void revoke() {
    if (revocationHandler != null) {
      lifecycle.revoke(revocationHandler);
    }
  }

  private void end(Step.End end) {
    settings.engine().events().leave(this);
    QueuePlace.active(settings, queue, false);
    QueuePlace.forget(settings, queue, this, end.cleanup().nodes());
    janitor().ended(end.cleanup());
    lifecycle.ended(end.failure());
  }

  private void requeue(Step.Requeue requeue) {
    QueuePlace.forget(settings, queue, this, requeue.cleanup().nodes());
    log.info("Lock {}: {}; enqueuing again", settings.description(), requeue.reason());
    janitor().requeued(requeue.cleanup());
    settings
        .scheduler()
        .schedule(requeue.delayMillis(), () -> on(new StateEvent.RetryDue(requeue.epoch())));
  }

  /** The hold was let go: its nodes are deleted in the background, and its end announced. */
  private void released(Step.Release release) {
    settings.engine().events().leave(this);
    QueuePlace.active(settings, queue, false);
    QueuePlace.forget(settings, queue, this, release.nodes());
    settings.deletes().deleteGuaranteed(release.nodes(), deleted);
    CompletableFuture<Void> heard = lifecycle.released(release.token(), release.lostReason());
    if (heard.isDone()) {
      Lazy.give(this, RELEASE_HEARD); // nobody to tell, or told already
    } else {
      Callbacks.when(heard, (v, f) -> Lazy.give(this, RELEASE_HEARD));
    }
  }

  /** Whether this acquisition was granted with {@code path} (a client path) as its node. */
  boolean wasGrantedWith(String path) {
    AcquisitionState.View view = state.view();
    return view.phase().wasGranted() && view.nodes().contains(path);
  }

  @Override // one of the client's events
  public void heard(StateEvent event) {
    on(event);
  }

  @Override
  public Lifecycle lifecycle() {
    return lifecycle;
  }

  @Override
  public CompletableFuture<Void> cleanedUp() {
    return janitor().done();
  }

  /** The reads of our own node, made when first needed. */
  private OwnNodeReads holdChecks() {
    return Lazy.get(
        this,
        HOLD_CHECKS,
        a -> new OwnNodeReads(a.settings.zk(), a.lockPaths, a.events, a.settings.description()));
  }

  /** The attempt's janitor, made when first needed. */
  private Janitor janitor() {
    return Lazy.get(this, JANITOR, a -> new Janitor(a.settings.deletes(), a.lockPaths));
  }

  @Override
  public LockSettings settings() {
    return settings;
  }

  /** This attempt's acquisition as observers hear it, for a later attempt to carry on. */
  public Observation observation() {
    return lifecycle.observation();
  }

  /**
   * Withdraws the attempt unless it was granted or failed first: deletes our nodes, removes our
   * watch, sweeps for a create whose answer was lost. Safe at any time, from any thread.
   */
  @Override
  public Outcome withdraw(AcquireOutcome reason) {
    lifecycle.withdrawing(reason);
    on(new StateEvent.Withdraw());
    Phase phase = state.view().phase();
    if (phase.wasGranted()) {
      return Outcome.GRANTED;
    }
    return phase == Phase.FAILED ? Outcome.FAILED : Outcome.WITHDRAWN;
  }

  /**
   * Releases the hold and waits until ZooKeeper confirmed the delete of our nodes, while the client
   * is connected and at most the client's connection timeout (then, or at once if ZooKeeper cannot
   * be reached, Curator's guaranteed delete goes on in the background), and until the listeners
   * heard RELEASED. Releasing a lost hold clears local state and warns.
   */
  @Override
  public void release() {
    Awaits.deleted(releaseAsync(), settings);
    if (lifecycle.isHeard() && !lifecycle.isDeliveringHere()) {
      Lazy.awaited(this, RELEASE_HEARD).join();
    }
  }

  /** Releases the hold without waiting; the future completes once its nodes are deleted. */
  @Override
  public CompletableFuture<Void> releaseAsync() {
    on(StateEvent.RELEASE);
    return deleted;
  }

  /**
   * The state decides whether this or a release (or loss) came first. Our nodes go with a
   * guaranteed delete: never a later holder's node; an unreachable ZooKeeper delays only that.
   */
  @Override
  public void expire(String reason, AtomicBoolean taken) {
    on(new StateEvent.Expire(reason, taken));
  }

  @Override
  public long checkedFencingToken() {
    return notLost().token();
  }

  @Override
  public void checkNotLost() {
    notLost();
  }

  private AcquisitionState.View notLost() {
    AcquisitionState.View view = state.view();
    if (view.phase() == Phase.LOST) {
      throw LockFailures.lost(settings.description(), view.owner(), view.lostReason());
    }
    return view;
  }

  /** Where the attempt or hold stands, read at one moment. */
  public AcquisitionState.View view() {
    return state.view();
  }

  @Override
  public Phase phase() {
    return state.phase();
  }

  @Override
  public List<String> nodePaths() {
    return state.view().nodes();
  }

  /** One check operation per node of ours, for the caller's transaction. */
  @Override
  public List<CuratorOp> ownershipChecks() {
    return settings.zk().checks(notLost().nodes());
  }
}

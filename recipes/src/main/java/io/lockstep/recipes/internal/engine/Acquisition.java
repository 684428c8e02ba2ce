package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.internal.zk.ZkRequests;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockState;
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

  /** What the place shared by local holds hears of its own acquisition. */
  public interface PlaceHooks {
    /** The child watch of the granting read fired: someone changed the queue. No user code. */
    void queueChanged();

    /** The hold entered {@code state} after its grant, in order with the grant's announcement. */
    void stateChanged(LockState state);
  }

  private final LockSettings settings;
  private final AcquisitionState state;
  private final Runnable revocationHandler;
  private final PlaceHooks hooks;
  private final Enqueuer enqueuer;
  private final OwnNodeReads holdChecks;
  private final Lifecycle lifecycle;
  private final QueuePlace place;
  private final List<String> lockPaths;
  private final Outbox<Step> outbox = new Outbox<>(this::run);
  private final Consumer<StateEvent> events = this::on; // what answers and watch events go to
  private volatile Janitor janitor; // made at the first cleanup (a granted attempt needs none)
  private final CompletableFuture<Void> deleted = new CompletableFuture<>(); // at release
  private final CompletableFuture<Void> releaseHeard = new CompletableFuture<>(); // at release

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
    LockEngine engine = settings.engine();
    this.place = new QueuePlace(this, settings, lockPaths);
    boolean watchFirstRead = place.watchFirstRead();
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
    this.holdChecks = new OwnNodeReads(settings.zk(), lockPaths, events, settings.description());
    Watcher firstReadWatch = watchFirstRead ? holdChecks.queueWatcher() : null;
    this.enqueuer =
        new Enqueuer(
            settings.zk(), settings.creates(), slots, firstReadWatch, engine.localQueues(), events);
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
    acquisition.place.active(true);
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
    place.heard(event);
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
      holdChecks.readOwnNode(read);
    } else if (step instanceof Step.Verify verify) {
      holdChecks.verify(verify);
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
      place.forget(tidy.cleanup().nodes());
      janitor().tidy(tidy.cleanup(), tidy.answersCreate());
    } else if (step instanceof Step.Release release) {
      released(release);
    } else if (step instanceof Step.Discard discard) {
      place.forget(discard.nodes()); // the hold stays LOST, no longer a node of this process
      var unused = settings.deletes().deleteGuaranteed(discard.nodes());
    } else {
      throw new IllegalStateException("unknown step " + step);
    }
  }

  private void readQueue(int e, boolean watchQueue) {
    Watcher childWatcher = watchQueue && lockPaths.size() == 1 ? holdChecks.queueWatcher() : null;
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
    place.active(false);
    place.forget(end.cleanup().nodes());
    janitor().ended(end.cleanup());
    lifecycle.ended(end.failure());
  }

  private void requeue(Step.Requeue requeue) {
    place.forget(requeue.cleanup().nodes());
    log.info("Lock {}: {}; enqueuing again", settings.description(), requeue.reason());
    janitor().requeued(requeue.cleanup());
    settings
        .scheduler()
        .schedule(requeue.delayMillis(), () -> on(new StateEvent.RetryDue(requeue.epoch())));
  }

  /** The hold was let go: its nodes are deleted in the background, and its end announced. */
  private void released(Step.Release release) {
    settings.engine().events().leave(this);
    place.active(false);
    place.forget(release.nodes());
    settings.deletes().deleteGuaranteed(release.nodes(), deleted);
    CompletableFuture<Void> heard = lifecycle.released(release.token(), release.lostReason());
    if (heard.isDone()) {
      releaseHeard.complete(null); // nobody to tell, or told already
    } else {
      Callbacks.when(heard, (v, f) -> releaseHeard.complete(null));
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

  /** The attempt's janitor, made when first needed. */
  private Janitor janitor() {
    Janitor made = janitor;
    if (made == null) {
      made = new Janitor(settings.deletes(), lockPaths);
      if (!JANITOR.compareAndSet(this, null, made)) {
        made = janitor;
      }
    }
    return made;
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
      releaseHeard.join();
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

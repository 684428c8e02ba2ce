package io.lockstep.recipes.locks;

import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt to take a lock, and the hold it turns into: the engine every recipe runs on.
 *
 * <p>{@link AcquisitionState} owns the state and decides; this class carries out its steps: it
 * hands creates to the {@link Enqueuer}, reads the queue, arms a {@link PredecessorWatch}, lets
 * {@link HoldChecks} read our own node, the {@link Janitor} clean up and the {@link Notifier} tell
 * listeners and the caller, keeps its {@link QueuePlace} among this process's nodes, and passes the
 * client's events ({@link ClientEvents}) to the state. Nothing waits inside: ZooKeeper callbacks
 * and watch events drive it, and {@link #grantedFuture()} completes when the lock is held. {@link
 * BlockingAcquire} parks a caller on that future (never on a monitor), {@link Handles} hands out
 * asynchronous holds.
 */
final class Acquisition implements Attempt, ClientEvents.Member {
  /*
   * Algorithm notes.
   *
   * Repeatedly (each arrow is a ZooKeeper callback or watch event feeding AcquisitionState):
   *   create our node(s) (one create, or one multi) -> its stat gives the fencing token and the
   *     owning session; on a lost answer, find our node by its protection id;
   *   read the children (one getChildren, or one read-only multi; the first read of a single
   *     queue leaves a child watch if the lock's last read found no queue);
   *   judge (QueueJudge): hold, or watch node X with getData;
   *   X changed -> read again; X was the head of an append-only queue and is gone -> hold at
   *     once (a revocable lock first reads and watches its node with one getData).
   * Holding: our own node is watched once the hold has lasted its grace, unless the granting
   *   read's child watch is still armed (it fires at the queue's next change, and then the same).
   * Ending without a grant: the Janitor deletes our nodes, withdraws the watch, sweeps for a
   * create whose outcome is unknown; the blocking caller waits for that within a bound.
   *
   * Threads: callbacks and watch events run on ZooKeeper's event thread, connection events on
   * Curator's, timers on the Scheduler's; each only asks the state and sends requests. User code
   * (listeners, revocation) runs through the Notifier, on the Scheduler's threads, in order.
   */

  private static final Logger log = LoggerFactory.getLogger(Acquisition.class);

  private final LockContext context;
  private final AcquisitionState state;
  private final Runnable revocationHandler;
  private final List<String> lockPaths;
  private final Enqueuer enqueuer;
  private final HoldChecks holdChecks;
  private final Janitor janitor;
  private final Notifier notifier;
  private final ClientEvents clientEvents;
  private final QueuePlace place;
  private final CompletableFuture<Void> granted = new CompletableFuture<>();
  private final CompletableFuture<Void> decided = new CompletableFuture<>();
  private final Telemetry telemetry;
  private volatile AcquireOutcome withdrawnAs = AcquireOutcome.WITHDRAWN;
  private volatile Runnable queueChangedHook; // told when the queue changes while held
  private volatile Consumer<LockState> stateChangedHook; // told of the hold's changes of state
  private volatile RuntimeException failure;

  private Acquisition(LockContext context, List<Slot> slots, Runnable revocationHandler) {
    this.context = context;
    this.revocationHandler = revocationHandler;
    this.lockPaths = Enqueuer.lockPaths(slots);
    this.place = new QueuePlace(this, context, lockPaths);
    boolean watchFirstRead = place.watchFirstRead();
    this.state =
        new AcquisitionState(
            slots,
            context.description(),
            revocationHandler != null,
            watchFirstRead,
            context.retries(),
            context.protectionIds(),
            context.ownNodeWatchGraceNanos());
    this.holdChecks = new HoldChecks(context.zk(), lockPaths, this::on, context.description());
    Watcher firstReadWatch = watchFirstRead ? holdChecks.queueWatcher() : null;
    this.clientEvents = context.clientEvents();
    this.enqueuer =
        new Enqueuer(context.zk(), slots, firstReadWatch, clientEvents.localQueues(), this::on);
    this.janitor = new Janitor(context.deletes(), lockPaths);
    this.notifier = new Notifier(context.scheduler());
    this.telemetry = new Telemetry(context, clientEvents, notifier);
  }

  /**
   * Starts enqueuing in the given queues.
   *
   * @param revocationHandler run when a revocation is requested while held, or null if the lock is
   *     not revocable (a revocable lock watches its own node before the grant, as Curator's does)
   */
  static Acquisition start(LockContext context, List<Slot> slots, Runnable revocationHandler) {
    if (slots.isEmpty()) {
      throw new IllegalArgumentException("an acquisition needs at least one queue");
    }
    Acquisition acquisition = new Acquisition(context, slots, revocationHandler);
    context.attemptStarted();
    acquisition.place.active(true);
    acquisition.telemetry.started();
    if (acquisition.clientEvents.join(acquisition)) {
      acquisition.run(acquisition.state.start());
    } else {
      acquisition.run(
          acquisition.state.on(
              new StateEvent.Closed())); // a closed client: fail at once, send nothing
    }
    return acquisition;
  }

  // ---- carrying out steps ----

  /** Runs {@code hook} when the child watch of the granting read fires: the queue changed. */
  void onQueueChanged(Runnable hook) {
    queueChangedHook = hook;
  }

  /**
   * Runs {@code hook}, in order with the grant's announcement, each time the hold's state changes
   * after its grant (AT_RISK, HELD again, LOST). Unlike the lock's listeners, it names this hold.
   */
  void onStateChanged(Consumer<LockState> hook) {
    stateChangedHook = hook;
  }

  /** An answer or a watch event: to the state, and its step carried out. */
  void on(StateEvent event) {
    Runnable hook = queueChangedHook;
    if (hook != null && event instanceof StateEvent.QueueChanged) {
      hook.run();
    }
    place.heard(event);
    run(state.on(event));
  }

  /** Carries out one step of the state. */
  void run(Step step) {
    if (step instanceof Step.Ignore) {
      return;
    } else if (step instanceof Step.Both both) {
      run(both.first());
      run(both.second());
    } else if (step instanceof Step.Create create) {
      enqueuer.create(create);
    } else if (step instanceof Step.CreateParents parents) {
      enqueuer.createParents(parents);
    } else if (step instanceof Step.FindOwnNode find) {
      enqueuer.findOwnNode(find);
    } else if (step instanceof Step.ReadQueue read) {
      readQueue(read.epoch(), read.watchQueue());
    } else if (step instanceof Step.Watch watch) {
      decided.complete(null);
      PredecessorWatch.arm(context.zk(), context.scheduler(), state, this::on, watch, clientEvents);
    } else if (step instanceof Step.ReadOwnNode read) {
      holdChecks.readOwnNode(read);
    } else if (step instanceof Step.Verify verify) {
      holdChecks.verify(verify);
    } else if (step instanceof Step.Later later) {
      context
          .scheduler()
          .schedule(later.delayMillis(), () -> on(new StateEvent.RetryDue(later.epoch())));
    } else if (step instanceof Step.WatchOwnNodeLater later) {
      context
          .scheduler()
          .schedule(later.delayMillis(), () -> on(new StateEvent.OwnNodeWatchDue(later.epoch())));
    } else if (step instanceof Step.Grant grant) {
      grant(grant);
    } else if (step instanceof Step.Notify notice) {
      notify(notice);
    } else if (step instanceof Step.Revoke) {
      revoke();
    } else if (step instanceof Step.End end) {
      end(end);
    } else if (step instanceof Step.Requeue requeue) {
      requeue(requeue);
    } else if (step instanceof Step.Tidy tidy) {
      place.forget(tidy.cleanup().nodes());
      janitor.tidy(tidy.cleanup(), tidy.answersCreate());
    } else if (step instanceof Step.Release release) {
      released(release);
    } else {
      throw new IllegalStateException("unknown step " + step);
    }
  }

  private void readQueue(int e, boolean watchQueue) {
    Watcher childWatcher = watchQueue && lockPaths.size() == 1 ? holdChecks.queueWatcher() : null;
    ZkRequests zk = context.zk();
    Callbacks.when(
        zk.children(lockPaths, childWatcher),
        (children, error) -> {
          if (error == null) {
            on(new StateEvent.QueueRead(e, children.lists(), zk.isConnected()));
          } else {
            on(new StateEvent.ReadFailed(e, error));
          }
        });
  }

  /** Listeners hear HELD (and AT_RISK, if granted while disconnected) before the caller wakes. */
  private void grant(Step.Grant grant) {
    decided.complete(null);
    long token = grant.token();
    telemetry.granted(token);
    if (context.hasListeners()) {
      notifier.submit(() -> context.tellListeners(LockState.HELD, token));
    }
    if (grant.atRisk()) {
      telemetry.stateChanged(LockState.AT_RISK, token);
      if (context.hasListeners()) {
        notifier.submit(() -> context.tellListeners(LockState.AT_RISK, token));
      }
    }
    notifier.submitQuiet(() -> granted.complete(null)); // after what was queued: HELD first
    if (grant.revoke()) {
      revoke(); // asked for before we held: honoured right after the grant
    }
  }

  private void notify(Step.Notify notice) {
    if (notice.state() == LockState.LOST) {
      log.warn("Lock {} lost: {}", context.description(), notice.reason());
    } else {
      log.debug("Lock {} is {}: {}", context.description(), notice.state(), notice.reason());
    }
    telemetry.stateChanged(notice.state(), notice.token());
    if (context.hasListeners()) {
      notifier.submit(() -> context.tellListeners(notice.state(), notice.token()));
    }
    Consumer<LockState> hook = stateChangedHook;
    if (hook != null) {
      notifier.submit(() -> hook.accept(notice.state()));
    }
  }

  private void revoke() {
    if (revocationHandler != null) {
      notifier.submit(revocationHandler);
    }
  }

  private void end(Step.End end) {
    clientEvents.leave(this);
    place.active(false);
    place.forget(end.cleanup().nodes());
    context.attemptEnded();
    janitor.ended(end.cleanup());
    decided.complete(null);
    telemetry.ended(end.failure() == null ? withdrawnAs : AcquireOutcome.FAILED);
    if (end.failure() == null) {
      granted.completeExceptionally(new CancellationException("withdrawn"));
    } else {
      failure = end.failure();
      granted.completeExceptionally(end.failure());
    }
  }

  private void requeue(Step.Requeue requeue) {
    place.forget(requeue.cleanup().nodes());
    log.info("Lock {}: {}; enqueuing again", context.description(), requeue.reason());
    janitor.requeued(requeue.cleanup());
    context
        .scheduler()
        .schedule(requeue.delayMillis(), () -> on(new StateEvent.RetryDue(requeue.epoch())));
  }

  private void released(Step.Release release) {
    clientEvents.leave(this);
    place.active(false);
    place.forget(release.nodes());
    context.attemptEnded();
    if (release.lostReason() != null) {
      log.warn(
          "Released lock {} after it was lost ({}); local state cleared",
          context.description(),
          release.lostReason());
    }
    context.deletes().deleteNow(release.nodes());
    telemetry.released(release.token());
    if (context.hasListeners()) {
      notifier.deliverNow(() -> context.tellListeners(LockState.RELEASED, release.token()));
    }
  }

  /** Whether this acquisition was granted with {@code path} (a client path) as its node. */
  boolean wasGrantedWith(String path) {
    AcquisitionState.View view = state.view();
    return view.phase().wasGranted() && view.nodes().contains(path);
  }

  // ---- the client's events ----

  @Override
  public void suspended() {
    on(new StateEvent.Suspended());
  }

  @Override
  public void reconnected(long session) {
    on(new StateEvent.Reconnected(session));
  }

  @Override
  public void sessionLost() {
    on(new StateEvent.SessionLost());
  }

  @Override
  public void closed() {
    on(new StateEvent.Closed());
  }

  // ---- the caller ----

  /** Completes when the lock is held; fails with the attempt's failure, or when withdrawn. */
  @Override
  public CompletableFuture<Void> grantedFuture() {
    return granted;
  }

  /**
   * Completes when the first attempt reached a verdict (granted, waiting behind a node, or ended):
   * what a zero budget waits for.
   */
  @Override
  public CompletableFuture<Void> decided() {
    return decided;
  }

  /** Completes when an attempt that ended without a grant has left nothing behind. */
  @Override
  public CompletableFuture<Void> cleanedUp() {
    return janitor.done();
  }

  /** Why the attempt failed, once it has. */
  @Override
  public RuntimeException failure() {
    return failure;
  }

  @Override
  public LockContext context() {
    return context;
  }

  /**
   * Withdraws the attempt unless it was granted or failed first: deletes our nodes, removes our
   * watch, sweeps for a create whose answer was lost. Safe at any time, from any thread.
   *
   * @param reason what observers hear: {@link AcquireOutcome#TIMED_OUT} or {@code WITHDRAWN}
   */
  @Override
  public Outcome withdraw(AcquireOutcome reason) {
    withdrawnAs = reason;
    on(new StateEvent.Withdraw());
    Phase phase = state.view().phase();
    if (phase.wasGranted()) {
      return Outcome.GRANTED;
    }
    return phase == Phase.FAILED ? Outcome.FAILED : Outcome.WITHDRAWN;
  }

  /**
   * Releases the hold: deletes our nodes in the caller's thread (handed to Curator's background
   * retries if ZooKeeper is unreachable). Releasing a lost hold clears local state and warns.
   */
  @Override
  public void release() {
    on(new StateEvent.Release());
  }

  /** The fencing token, or a {@link LockOwnershipLostException} if the hold was lost. */
  @Override
  public long checkedFencingToken() {
    return notLost().token();
  }

  /** Throws {@link LockOwnershipLostException} if the hold was lost. */
  @Override
  public void checkNotLost() {
    notLost();
  }

  private AcquisitionState.View notLost() {
    AcquisitionState.View view = state.view();
    if (view.phase() == Phase.LOST) {
      throw new LockOwnershipLostException(
          "Lock "
              + context.description()
              + " was lost by session 0x"
              + Long.toHexString(view.owner())
              + ": "
              + view.lostReason());
    }
    return view;
  }

  /** Where the attempt or hold stands, read at one moment. */
  AcquisitionState.View view() {
    return state.view();
  }

  @Override
  public Phase phase() {
    return state.view().phase();
  }

  /** Our node paths, one per queue. */
  @Override
  public List<String> nodePaths() {
    return state.view().nodes();
  }

  /** One check operation per node of ours, for the caller's transaction. */
  @Override
  public List<CuratorOp> ownershipChecks() {
    return context.zk().checks(notLost().nodes());
  }

  /** The client's connection timeout: the grace given to a first attempt and to a cleanup. */
  @Override
  public long connectionTimeoutNanos() {
    return TimeUnit.MILLISECONDS.toNanos(
        context.client().getZookeeperClient().getConnectionTimeoutMs());
  }
}

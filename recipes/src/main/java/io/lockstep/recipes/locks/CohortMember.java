package io.lockstep.recipes.locks;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One local contender of a {@link Cohort}: an attempt that waits in memory for its turn on its
 * process's place in the queue, and the hold it becomes. To its lock object it is an {@link
 * Attempt} like any other: listeners hear HELD, AT_RISK, LOST and RELEASED, observers and the
 * Flight Recorder hear the attempt.
 */
final class CohortMember implements Attempt {
  private static final Logger log = LoggerFactory.getLogger(CohortMember.class);

  /** The version of a hold that has not written its fence yet. */
  private static final int UNFENCED = -2;

  private final Cohort cohort;
  private final LockContext context;
  private final int maxInARow;
  private final Notifier notifier;
  private final Telemetry telemetry;
  private final CompletableFuture<Void> granted = new CompletableFuture<>();
  private final CompletableFuture<Void> decided = new CompletableFuture<>();
  private final CompletableFuture<Void> cleaned = new CompletableFuture<>();
  private final ReentrantLock lock = new ReentrantLock();
  private volatile RuntimeException failure;
  private volatile AcquireOutcome withdrawnAs = AcquireOutcome.WITHDRAWN;

  @GuardedBy("lock")
  private Phase phase = Phase.WAITING;

  @GuardedBy("lock")
  private String node; // once granted: the place's node

  @GuardedBy("lock")
  private long owner; // once granted: the session owning the node

  @GuardedBy("lock")
  private long token; // once fenced: the czxid, or the zxid of the fence write

  @GuardedBy("lock")
  private int version = UNFENCED; // once fenced: the node's version this hold's checks require

  @GuardedBy("lock")
  private String lostReason;

  CohortMember(Cohort cohort, LockContext context, int maxInARow) {
    this.cohort = cohort;
    this.context = context;
    this.maxInARow = maxInARow;
    this.notifier = new Notifier(context.scheduler());
    this.telemetry = new Telemetry(context, context.clientEvents(), notifier);
    context.attemptStarted();
    telemetry.started();
  }

  int maxInARow() {
    return maxInARow;
  }

  // ---- told by the cohort ----

  /**
   * Our turn: the place's node is ours to hold; the first member of a place keeps its czxid. Called
   * by the cohort under its lock, so a withdrawal that loses the race finds the hold granted;
   * {@link #announce()} follows outside it.
   */
  void grant(String placeNode, long placeToken, long nodeOwner, boolean first, Phase placePhase) {
    lock.lock();
    try {
      phase = placePhase == Phase.AT_RISK ? Phase.AT_RISK : Phase.HELD;
      node = placeNode;
      owner = nodeOwner;
      token = first ? placeToken : 0;
      version = first ? 0 : UNFENCED;
    } finally {
      lock.unlock();
    }
  }

  /** Tells observers and listeners of the grant, then the caller. */
  void announce() {
    boolean atRisk;
    long known;
    lock.lock();
    try {
      atRisk = phase == Phase.AT_RISK;
      known = token;
    } finally {
      lock.unlock();
    }
    decided.complete(null);
    telemetry.granted(known);
    if (context.hasListeners()) {
      notifier.submit(() -> context.tellListeners(LockState.HELD, known));
      if (atRisk) {
        notifier.submit(() -> context.tellListeners(LockState.AT_RISK, known));
      }
    }
    notifier.submitQuiet(() -> granted.complete(null));
  }

  /** The place could not be taken. */
  void failed(RuntimeException reason) {
    lock.lock();
    try {
      phase = Phase.FAILED;
    } finally {
      lock.unlock();
    }
    failure = reason;
    ended(AcquireOutcome.FAILED, null);
    granted.completeExceptionally(reason);
  }

  /** Withdrawn while waiting; {@code placeCleanup} if the place was given up with it. */
  void withdrawn(CompletableFuture<Void> placeCleanup) {
    lock.lock();
    try {
      phase = Phase.WITHDRAWN;
    } finally {
      lock.unlock();
    }
    ended(withdrawnAs, placeCleanup);
    granted.completeExceptionally(new CancellationException("withdrawn"));
  }

  private void ended(AcquireOutcome outcome, CompletableFuture<Void> placeCleanup) {
    context.attemptEnded();
    telemetry.ended(outcome);
    decided.complete(null);
    if (placeCleanup == null) {
      cleaned.complete(null);
    } else {
      Callbacks.when(placeCleanup, (v, f) -> cleaned.complete(null));
    }
  }

  /** The fence was written: this hold's token and the version its checks require. */
  void fenced(long mzxid, int newVersion) {
    lock.lock();
    try {
      token = mzxid;
      version = newVersion;
    } finally {
      lock.unlock();
    }
  }

  /** The place's state changed while this member held it. */
  void placeChanged(LockState state, String reason) {
    LockState heard;
    long known;
    lock.lock();
    try {
      if (!phase.isHolding()) {
        return;
      }
      if (state == LockState.LOST) {
        phase = Phase.LOST;
        lostReason = reason;
      } else if (state == LockState.AT_RISK && phase == Phase.HELD) {
        phase = Phase.AT_RISK;
      } else if (state == LockState.HELD && phase == Phase.AT_RISK) {
        phase = Phase.HELD;
      } else {
        return;
      }
      heard = state;
      known = token;
    } finally {
      lock.unlock();
    }
    telemetry.stateChanged(heard, known);
    if (context.hasListeners()) {
      notifier.submit(() -> context.tellListeners(heard, known));
    }
  }

  /** The place's node is gone (found while writing the fence). */
  void lost(String reason) {
    placeChanged(LockState.LOST, reason);
  }

  // ---- the Attempt ----

  @Override
  public CompletableFuture<Void> grantedFuture() {
    return granted;
  }

  @Override
  public CompletableFuture<Void> decided() {
    return decided;
  }

  @Override
  public CompletableFuture<Void> cleanedUp() {
    return cleaned;
  }

  @Override
  public Outcome withdraw(AcquireOutcome reason) {
    withdrawnAs = reason;
    return cohort.withdraw(this);
  }

  @Override
  public RuntimeException failure() {
    return failure;
  }

  @Override
  public long connectionTimeoutNanos() {
    return TimeUnit.MILLISECONDS.toNanos(
        context.client().getZookeeperClient().getConnectionTimeoutMs());
  }

  @Override
  public LockContext context() {
    return context;
  }

  @Override
  public void release() {
    String lost;
    long known;
    lock.lock();
    try {
      if (phase == Phase.RELEASED) {
        return;
      }
      if (!phase.wasGranted()) {
        throw new IllegalStateException("release of an attempt never granted: " + phase);
      }
      lost = phase == Phase.LOST ? lostReason : null;
      known = token;
      phase = Phase.RELEASED;
    } finally {
      lock.unlock();
    }
    if (lost != null) {
      log.warn(
          "Released lock {} after it was lost ({}); local state cleared",
          context.description(),
          lost);
    }
    cohort.release(this); // passes the place on, or deletes it in this thread
    context.attemptEnded();
    telemetry.released(known);
    if (context.hasListeners()) {
      notifier.deliverNow(() -> context.tellListeners(LockState.RELEASED, known));
    }
  }

  @Override
  public long checkedFencingToken() {
    fenceIfNeeded();
    lock.lock();
    try {
      return token;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void checkNotLost() {
    lock.lock();
    try {
      if (phase == Phase.LOST) {
        throw new LockOwnershipLostException(
            "Lock "
                + context.description()
                + " was lost by session 0x"
                + Long.toHexString(owner)
                + ": "
                + lostReason);
      }
    } finally {
      lock.unlock();
    }
  }

  /** A check of the node at the version of this hold's fence: a later holder's fence fails it. */
  @Override
  public List<CuratorOp> ownershipChecks() {
    fenceIfNeeded();
    String path;
    int required;
    lock.lock();
    try {
      path = node;
      required = version;
    } finally {
      lock.unlock();
    }
    try {
      return List.of(context.client().transactionOp().check().withVersion(required).forPath(path));
    } catch (Exception e) {
      throw new LockException("Could not build an ownership check for " + path, e);
    }
  }

  private void fenceIfNeeded() {
    checkNotLost();
    boolean unfenced;
    lock.lock();
    try {
      unfenced = version == UNFENCED;
    } finally {
      lock.unlock();
    }
    if (unfenced) {
      cohort.fence(this);
    }
  }

  @Override
  public Phase phase() {
    lock.lock();
    try {
      return phase;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public List<String> nodePaths() {
    lock.lock();
    try {
      return node == null ? List.of() : List.of(node);
    } finally {
      lock.unlock();
    }
  }
}

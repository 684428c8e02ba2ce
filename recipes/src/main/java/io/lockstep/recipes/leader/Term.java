package io.lockstep.recipes.leader;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.Awaits;
import io.lockstep.recipes.internal.engine.Phase;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.api.transaction.CuratorOp;

/** A {@link Leadership}: one granted attempt of the election's queue, and its epoch. */
final class Term implements Leadership {
  private final Election election;
  private final int id; // the election machine's
  private final Attempt attempt;
  private final long epoch;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicBoolean released = new AtomicBoolean();

  /** Completed with this term once the listeners have heard it elected. */
  private final CompletableFuture<Leadership> announced = new CompletableFuture<>();

  /**
   * Why the term was lost, kept before the election releases the lost attempt (a released attempt
   * no longer says); null while not lost.
   */
  private volatile String lostReason;

  Term(Election election, int id, Attempt attempt, long epoch) {
    this.election = election;
    this.id = id;
    this.attempt = attempt;
    this.epoch = epoch;
  }

  /** The epoch, read without a check: what the state listener matches changes against. */
  long epoch() {
    return epoch;
  }

  /**
   * Completes with this term once its listeners have heard it elected: a caller waiting for
   * leadership returns after them.
   */
  CompletableFuture<Leadership> announced() {
    return announced;
  }

  /** The election machine's id of the term. */
  int id() {
    return id;
  }

  /** The node of the granted attempt while it holds (or may, at risk). */
  Optional<String> nodePath() {
    return nodeOf(attempt);
  }

  /** The node of {@code attempt} while it is in the queue or holds; empty for a null attempt. */
  static Optional<String> nodeOf(Attempt attempt) {
    if (attempt == null) {
      return Optional.empty();
    }
    List<String> nodes = attempt.nodePaths();
    Phase phase = attempt.phase(); // read after: a requeue clears the nodes, back to CREATING
    boolean ours = phase.compareTo(Phase.READING) >= 0 && (phase.isWaiting() || phase.isHolding());
    return ours && !nodes.isEmpty() ? Optional.of(nodes.get(0)) : Optional.empty();
  }

  /** The hold's own state, as the engine has it now (the term may not have heard of it yet). */
  LockState attemptState() {
    return attempt.phase().holdState();
  }

  /** Marks the term given up; true the first time. */
  boolean markClosed() {
    return closed.compareAndSet(false, true);
  }

  /**
   * Releases the node, waiting as {@link Attempt#release()} does; only the first call acts, a later
   * one (a give-up racing the election's close, or repeated) waits for the same delete as bounded.
   */
  void releaseNode() {
    if (released.compareAndSet(false, true)) {
      attempt.release();
    } else {
      Awaits.deleted(attempt.releaseAsync(), attempt.settings());
    }
  }

  /**
   * Releases the node without waiting, or if it was released before, returns that release's delete.
   *
   * @return completes once the node is deleted
   */
  CompletableFuture<Void> releaseAsync() {
    released.set(true);
    return attempt.releaseAsync(); // the engine's release acts once: later calls get its delete
  }

  /**
   * The term was lost: keeps why, then clears the attempt's local state without waiting (its node
   * is gone already).
   */
  void lost() {
    try {
      attempt.checkNotLost();
      lostReason = "Leadership of " + path() + " was lost";
    } catch (LockOwnershipLostException e) {
      lostReason = e.getMessage();
    }
    if (released.compareAndSet(false, true)) {
      var unused = attempt.releaseAsync();
    }
  }

  @Override
  public String path() {
    return attempt.settings().description();
  }

  @Override
  public long fencingToken() {
    checkOpen();
    checkNotLost();
    return attempt.checkedFencingToken();
  }

  @Override
  public LockState state() {
    if (closed.get()) {
      return LockState.RELEASED;
    }
    if (lostReason != null) {
      return LockState.LOST;
    }
    return attempt.phase().holdState();
  }

  @Override
  public void checkHeld() {
    checkOpen();
    checkNotLost();
  }

  @Override
  public List<CuratorOp> ownershipChecks() {
    checkOpen();
    checkNotLost();
    return attempt.ownershipChecks();
  }

  @Override
  public CompletionStage<LockOwnershipLostException> whenLost() {
    return attempt.lostFuture(); // the caller's own: its cancel leaves ours alone
  }

  @Override
  public void close() {
    election.relinquish(this);
  }

  private void checkNotLost() {
    String reason = lostReason;
    if (reason != null) {
      throw new LockOwnershipLostException(reason);
    }
    attempt.checkNotLost();
  }

  private void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException("This leadership of " + path() + " was given up");
    }
  }

  @Override
  public String toString() {
    return "Leadership[" + path() + ", epoch " + epoch + ", " + state() + "]";
  }
}

package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.api.transaction.CuratorOp;

/** A {@link LockHold}: one granted acquisition, owned by whoever has the handle. */
final class Handle implements LockHold {
  private final Attempt acquisition;
  private final Handles owner;
  private final AtomicBoolean closed = new AtomicBoolean();

  Handle(Attempt acquisition, Handles owner) {
    this.acquisition = acquisition;
    this.owner = owner;
  }

  @Override
  public String path() {
    return acquisition.settings().description();
  }

  @Override
  public long fencingToken() {
    checkOpen();
    return acquisition.checkedFencingToken();
  }

  @Override
  public LockState state() {
    if (closed.get()) {
      return LockState.RELEASED;
    }
    return acquisition.phase().holdState();
  }

  @Override
  public void checkHeld() {
    checkOpen();
    acquisition.checkNotLost();
  }

  @Override
  public List<CuratorOp> ownershipChecks() {
    checkOpen();
    return acquisition.ownershipChecks();
  }

  @Override
  public CompletionStage<LockOwnershipLostException> whenLost() {
    return acquisition.lostFuture(); // the caller's own: its cancel leaves ours alone
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      owner.forget();
      acquisition.release();
    }
  }

  /**
   * Releases a hold nobody took, without waiting: it may run on whatever thread delivered the
   * grant.
   */
  void abandon() {
    var unused = closeAsync();
  }

  /**
   * Closes the hold without waiting for its nodes to be deleted.
   *
   * @return completes once they are (at once if the hold was closed before)
   */
  CompletableFuture<Void> closeAsync() {
    if (closed.compareAndSet(false, true)) {
      owner.forget();
      return acquisition.releaseAsync();
    }
    return CompletableFuture.completedFuture(null);
  }

  /** The granted acquisition this handle holds. */
  Attempt acquisition() {
    return acquisition;
  }

  private void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException("This hold of lock " + path() + " was closed");
    }
  }

  @Override
  public String toString() {
    return "LockHold[" + path() + ", " + state() + "]";
  }
}

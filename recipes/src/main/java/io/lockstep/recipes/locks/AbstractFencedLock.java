package io.lockstep.recipes.locks;

import io.lockstep.recipes.locks.internal.Holds;
import java.util.List;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.listen.Listenable;

/**
 * What every single-engine recipe answers the same way, whoever owns its holds: release, fencing,
 * checks and listeners all go to the caller's hold.
 */
abstract class AbstractFencedLock implements FencedLock {
  final Holds holds;

  AbstractFencedLock(Holds holds) {
    this.holds = holds;
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalMonitorStateException if the caller does not hold the lock
   */
  @Override
  public void release() {
    holds.release();
  }

  /**
   * Whether this lock object holds the lock in this process.
   *
   * @return true if held in this process
   */
  @Override
  public boolean isAcquiredInThisProcess() {
    return holds.isAcquiredInThisProcess();
  }

  @Override
  public long fencingToken() {
    return holds.requireCurrent().checkedFencingToken();
  }

  @Override
  public void checkHeld() {
    holds.requireCurrent().checkNotLost();
  }

  @Override
  public List<CuratorOp> ownershipChecks() {
    return holds.requireCurrent().ownershipChecks();
  }

  @Override
  public Listenable<LockStateListener> getStateListenable() {
    return holds.context().listeners();
  }
}

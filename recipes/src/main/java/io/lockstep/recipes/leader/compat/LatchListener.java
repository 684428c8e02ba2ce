package io.lockstep.recipes.leader.compat;

import io.lockstep.recipes.leader.Leadership;
import io.lockstep.recipes.leader.LeadershipListener;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Curator's listener told as Curator's latch tells it: {@code isLeader()} when the latch starts
 * leading (elected, or restored after a suspended connection), {@code notLeader()} when it stops
 * (at risk, lost or given up), each only on a change, on the executor last given for it; what the
 * callback throws is logged in the executor's task, as Curator's listener manager does, so it never
 * reaches the executor (a pool's thread would die of it).
 */
final class LatchListener implements LeadershipListener {
  private static final Logger log = LoggerFactory.getLogger(LatchListener.class);

  private final LeaderLatchListener listener;
  private final AtomicBoolean leading = new AtomicBoolean();
  private volatile Executor executor; // the last one given: Curator's latch keeps the last too

  LatchListener(LeaderLatchListener listener, Executor executor, boolean leadingNow) {
    this.listener = listener;
    this.executor = executor;
    this.leading.set(leadingNow);
  }

  /** The listener was added again with {@code executor}: its callbacks run there from now on. */
  void runOn(Executor executor) {
    this.executor = executor;
  }

  @Override
  public void elected(Leadership leadership) {
    leads(true);
  }

  @Override
  public void atRisk(Leadership leadership) {
    leads(false);
  }

  @Override
  public void restored(Leadership leadership) {
    leads(true);
  }

  @Override
  public void lost(Leadership leadership) {
    leads(false);
  }

  private void leads(boolean now) {
    if (leading.compareAndSet(!now, now)) {
      executor.execute(() -> tell(now));
    }
  }

  private void tell(boolean leads) {
    try {
      if (leads) {
        listener.isLeader();
      } else {
        listener.notLeader();
      }
    } catch (RuntimeException | Error e) {
      log.error("Listener ({}) threw an exception", listener, e);
    }
  }
}

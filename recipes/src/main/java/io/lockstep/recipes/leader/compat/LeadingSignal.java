package io.lockstep.recipes.leader.compat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;

/**
 * What a {@link LeaderLatch}'s {@code await} waits on: told as the latch's listeners are ({@code
 * isLeader()}, {@code notLeader()}), it wakes the waiters at each change, and they look again
 * whether the latch leads (its leadership held with the connection up, as Curator's latch counts
 * it: a suspended connection is no leadership to wait for). The election's state changes before its
 * notice goes out, so a waiter that looked before a change is woken by its notice. Added to the
 * election before any user listener: a listener's {@code isLeader()} that awaits the latch finds it
 * leading at once.
 */
final class LeadingSignal implements LeaderLatchListener {
  private volatile CompletableFuture<Void> change = new CompletableFuture<>(); // the next notice's
  private volatile boolean closed;

  @Override
  public void isLeader() {
    changed();
  }

  @Override
  public void notLeader() {
    changed();
  }

  private void changed() {
    CompletableFuture<Void> last = change;
    change = new CompletableFuture<>();
    last.complete(null);
  }

  /** The latch closed: waiters return, and no wait starts from now on. */
  void closed() {
    closed = true;
    changed();
  }

  /**
   * Waits until {@code leads} says the latch leads, at most {@code timeoutNanos} (negative: no
   * limit).
   *
   * @return true if it leads; false if the time ran out or the latch closed
   */
  boolean await(BooleanSupplier leads, long timeoutNanos) throws InterruptedException {
    long deadline = System.nanoTime() + Math.max(0, timeoutNanos);
    while (true) {
      CompletableFuture<Void> next = change; // before looking: a change after it completes it
      if (closed) {
        return false;
      }
      if (leads.getAsBoolean()) {
        return true;
      }
      long left = deadline - System.nanoTime();
      if (timeoutNanos >= 0 && left <= 0) {
        return false; // no time to wait: the interrupt flag is left alone, as Curator's latch does
      }
      try {
        if (timeoutNanos < 0) {
          next.get();
        } else {
          next.get(left, TimeUnit.NANOSECONDS);
        }
      } catch (ExecutionException never) {
        throw new IllegalStateException(never); // completed normally only
      } catch (TimeoutException ranOut) {
        return !closed && leads.getAsBoolean();
      }
    }
  }
}

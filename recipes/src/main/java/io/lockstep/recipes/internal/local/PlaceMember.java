package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.internal.engine.Acquisition;
import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.Awaits;
import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.internal.engine.Lifecycle;
import io.lockstep.recipes.internal.engine.LockFailures;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.engine.Phase;
import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.internal.zk.ZkRequests;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.api.transaction.CuratorOp;

/**
 * One local contender of a {@link LocalPlace}: an attempt that waits in memory for its turn on its
 * process's place in the queue, and the hold it becomes. To its lock object it is an {@link
 * Attempt} like any other; its listeners, observers and caller hear it through its {@link
 * Lifecycle}, as an {@link Acquisition}'s do.
 *
 * <p>Its token and checks (its fence) are taken when first asked for: the place's grant token if no
 * member took it yet, else a write of the node (see {@link PlaceState}).
 */
final class PlaceMember implements Attempt {
  private final LocalPlace place;
  private final LockSettings settings;
  private final Lifecycle lifecycle;
  private final Contender record;
  private final OwnReadNode<Acquisition>
      own; // a shared read place's member: its token and checks; else null

  PlaceMember(LocalPlace place, LockSettings settings, int maxInARow, long lingerNanos) {
    this.place = place;
    this.settings = settings;
    this.lifecycle = new Lifecycle(settings);
    this.record = new Contender(maxInARow, lingerNanos, lifecycle);
    this.own = place.isSharedReads() ? OwnReadNode.of(place) : null;
  }

  LocalPlace place() {
    return place;
  }

  @Override
  public Lifecycle lifecycle() {
    return lifecycle;
  }

  Contender record() {
    return record;
  }

  @Override
  public CompletableFuture<Void> cleanedUp() {
    return record.cleaned;
  }

  @Override
  public Outcome withdraw(AcquireOutcome reason) {
    lifecycle.withdrawing(reason);
    return place.withdraw(record);
  }

  @Override
  public LockSettings settings() {
    return settings;
  }

  /**
   * Passes the place on (nothing to wait for), or gives it back and waits until its node is deleted
   * (while connected, at most the client's connection timeout); then waits until listeners and
   * observers, if any, heard RELEASED.
   */
  @Override
  public void release() {
    if (own != null) {
      Awaits.whileConnected(own.release(), settings); // its checks fail before it lets go
    }
    CompletableFuture<Void> done = new CompletableFuture<>();
    if (place.release(record, done)) {
      Awaits.whileConnected(done, settings);
    }
    if (lifecycle.isHeard() && !lifecycle.isDeliveringHere()) {
      record.releaseHeard.join();
    }
  }

  @Override
  public CompletableFuture<Void> releaseAsync() {
    CompletableFuture<Void> done = new CompletableFuture<>();
    if (own == null) {
      var unused = place.release(record, done);
      return done;
    }
    Callbacks.when(own.release(), (v, f) -> place.release(record, done));
    return done;
  }

  /**
   * Not supported: a local hold shares its process's node with the next local holders, so it has no
   * node of its own to give up.
   */
  @Override
  public void expire(String reason, AtomicBoolean taken) {
    throw new UnsupportedOperationException(
        "A hold of a lock that hands off locally cannot expire: " + settings.description());
  }

  @Override
  public long checkedFencingToken() {
    if (own == null) {
      return fence().token();
    }
    PlaceState.Held held = holding();
    if (held.token() != 0) {
      return held.token();
    }
    long token = ownNode(held).checkedFencingToken(); // a reader that joined: its own node's
    lifecycle.tokenTaken(token);
    return token;
  }

  @Override
  public void checkNotLost() {
    if (place.state().phaseOf(record) == Phase.LOST) {
      throw lost();
    }
  }

  /**
   * A check of the place's node at this hold's version: the next holder's grant fails it; for a
   * shared read, the checks of the hold's own node.
   */
  @Override
  public List<CuratorOp> ownershipChecks() {
    if (own != null) {
      return ownNode(holding()).ownershipChecks();
    }
    fence();
    PlaceState.Held held = place.state().takeChecks(record);
    if (held == null) {
      checkNotLost();
      throw new IllegalStateException("This hold of lock " + settings.description() + " ended");
    }
    try {
      ZkRequests zk = settings.zk();
      return List.of(
          zk.raw()
              .transactionOp()
              .check()
              .withVersion(held.version())
              .forPath(zk.toZk(held.node())));
    } catch (Exception e) {
      throw new LockException("Could not build an ownership check for " + held.node(), e);
    }
  }

  /** What this hold holds; throws if it was lost or let go. */
  private PlaceState.Held holding() {
    checkNotLost();
    PlaceState.Held held = place.state().heldBy(record);
    if (held == null) {
      checkNotLost();
      throw new IllegalStateException("This hold of lock " + settings.description() + " ended");
    }
    return held;
  }

  /** A shared read's own node, made now if it has none: waits for its grant, as for a fence. */
  private Acquisition ownNode(PlaceState.Held held) {
    Acquisition node = own.start(held.node());
    if (node == null) { // let go by another thread of the hold since holding() looked
      checkNotLost();
      throw new IllegalStateException("This hold of lock " + settings.description() + " ended");
    }
    awaitFence(node.grantedFuture());
    return node;
  }

  /** This hold's fence: taken now if it has none (which may write the node). */
  private PlaceState.Held fence() {
    checkNotLost();
    PlaceState.Held held = place.state().heldBy(record);
    if (held != null && held.token() != 0) {
      return held;
    }
    CompletableFuture<Void> ready = new CompletableFuture<>();
    place.fence(record, ready);
    awaitFence(ready);
    held = place.state().heldBy(record);
    if (held == null) {
      checkNotLost();
      throw new IllegalStateException("This hold of lock " + settings.description() + " ended");
    }
    return held;
  }

  /**
   * Waits for the fence, at most the client's connection timeout (an interrupt does not end the
   * wait; the flag is kept). A write still out then is left to land: a later ask takes its zxid (a
   * shared read's own node likewise).
   */
  private void awaitFence(CompletableFuture<Void> ready) {
    boolean interrupted = false;
    Budget budget = Budget.of(settings.connectionTimeoutNanos(), settings);
    try {
      while (true) {
        try {
          ready.get(budget.remainingNanos(), TimeUnit.NANOSECONDS);
          return;
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (TimeoutException e) {
          checkNotLost();
          throw new LockException(
              "Lock "
                  + settings.description()
                  + (own == null
                      ? ": its fence (a write of the node) was not answered"
                      : ": its own read node was not granted")
                  + " within the connection timeout",
              e);
        } catch (ExecutionException e) {
          checkNotLost();
          Throwable cause = Retries.unwrap(e.getCause());
          if (cause instanceof RuntimeException failure
              && !(cause instanceof LockOwnershipLostException)) {
            throw failure;
          }
          throw new LockException("Lock " + settings.description() + ": " + cause, cause);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private LockOwnershipLostException lost() {
    PlaceState.Held held = place.state().lastHeldBy(record);
    return LockFailures.lost(
        settings.description(),
        held == null ? 0 : held.owner(),
        place.state().lostReasonOf(record));
  }

  @Override
  public Phase phase() {
    return place.state().phaseOf(record);
  }

  @Override
  public List<String> nodePaths() {
    PlaceState.Held held = place.state().lastHeldBy(record);
    return held == null ? List.of() : List.of(held.node());
  }
}

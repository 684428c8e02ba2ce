package io.lockstep.recipes.locks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.api.transaction.CuratorOp;

/**
 * The hold of a composed {@link MultiMutex}: one hold per lock, taken in list order, closed in
 * reverse. It has no single fencing token.
 */
final class ComposedHandle implements LockHold {
  private final List<LockHold> holds;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final CompletableFuture<LockOwnershipLostException> lost = new CompletableFuture<>();

  ComposedHandle(List<LockHold> holds) {
    this.holds = List.copyOf(holds);
    for (LockHold hold : this.holds) {
      var unused =
          hold.whenLost()
              .whenComplete(
                  (loss, closedUnlost) -> {
                    if (loss != null) {
                      lost.complete(loss); // the first loss of any of its holds
                    }
                  });
    }
  }

  @Override
  public String path() {
    List<String> paths = new ArrayList<>();
    holds.forEach(hold -> paths.add(hold.path()));
    return paths.toString();
  }

  /**
   * Not available: composed locks have one token each.
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  public long fencingToken() {
    throw new UnsupportedOperationException(
        "A MultiMutex composed of locks has no single fencing token; read each lock's own");
  }

  /** The least safe state of its holds: LOST, else AT_RISK, else HELD; RELEASED once closed. */
  @Override
  public LockState state() {
    if (closed.get()) {
      return LockState.RELEASED;
    }
    LockState worst = LockState.HELD;
    for (LockHold hold : holds) {
      LockState state = hold.state();
      if (state == LockState.LOST || state == LockState.RELEASED) {
        return LockState.LOST;
      }
      if (state == LockState.AT_RISK) {
        worst = LockState.AT_RISK;
      }
    }
    return worst;
  }

  @Override
  public void checkHeld() {
    holds.forEach(LockHold::checkHeld);
  }

  @Override
  public List<CuratorOp> ownershipChecks() {
    List<CuratorOp> checks = new ArrayList<>();
    holds.forEach(hold -> checks.addAll(hold.ownershipChecks()));
    return List.copyOf(checks);
  }

  /** Completes with the first loss of any of its holds; see {@link LockHold#whenLost()}. */
  @Override
  public CompletionStage<LockOwnershipLostException> whenLost() {
    return lost.copy();
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      try {
        closeAll(holds);
      } finally {
        lost.completeExceptionally(new CancellationException("Lock " + path() + " was released"));
      }
    }
  }

  /** Closes holds in reverse order, each even when an earlier one fails; rethrows the first. */
  static void closeAll(List<LockHold> holds) {
    RuntimeException first = null;
    for (int i = holds.size() - 1; i >= 0; i--) {
      try {
        holds.get(i).close();
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}

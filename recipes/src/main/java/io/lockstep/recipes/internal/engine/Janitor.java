package io.lockstep.recipes.internal.engine;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.lockstep.recipes.internal.engine.Step.Cleanup;
import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.internal.zk.NodeDeletes;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Carries out an acquisition's cleanups (nodes to delete, a watch to withdraw, a protection id to
 * sweep for) and knows when an attempt that ended without a grant has left nothing behind: its
 * deletes confirmed (or handed to Curator's background retries) and the answer of a create still
 * out received and dealt with. The blocking acquire waits for that, within a bound, so that a
 * withdrawn attempt is gone from the server when the call returns.
 */
final class Janitor {
  private final NodeDeletes deletes;
  private final List<String> lockPaths;
  private final CompletableFuture<Void> done = new CompletableFuture<>();
  private final ReentrantLock lock = new ReentrantLock();

  @GuardedBy("lock")
  private boolean ended; // the attempt ended without a grant

  @GuardedBy("lock")
  private int tasks; // tracked deletes and sweeps not finished yet

  @GuardedBy("lock")
  private boolean awaitingCreate; // the ended attempt's create is still unanswered

  @GuardedBy("lock")
  private boolean createAnswered; // that answer came (possibly before the end was recorded)

  Janitor(NodeDeletes deletes, List<String> lockPaths) {
    this.deletes = deletes;
    this.lockPaths = List.copyOf(lockPaths);
  }

  /** Cleans up after an attempt that ended without a grant, tracked by {@link #done()}. */
  void ended(Cleanup cleanup) {
    run(cleanup, true); // tasks counted before the end is recorded: no early completion
    lock.lock();
    try {
      ended = true;
      awaitingCreate = cleanup.awaitCreate();
    } finally {
      lock.unlock();
    }
    settle();
  }

  /** Cleans up what a requeue left, in the background. */
  void requeued(Cleanup cleanup) {
    run(cleanup, false);
  }

  /** Cleans up after a late create answer; {@code answersCreate} if the end was waiting for it. */
  void tidy(Cleanup cleanup, boolean answersCreate) {
    run(cleanup, answersCreate);
    if (answersCreate) {
      lock.lock();
      try {
        createAnswered = true;
      } finally {
        lock.unlock();
      }
      settle();
    }
  }

  /** Completes when an ended attempt has left nothing behind. */
  CompletableFuture<Void> done() {
    return done;
  }

  private void run(Cleanup cleanup, boolean tracked) {
    if (cleanup.watch() != null) {
      if (cleanup.clientClosed()) {
        cleanup.watch().forget();
      } else {
        cleanup.watch().withdraw();
      }
    }
    if (cleanup.clientClosed()) {
      return;
    }
    if (!cleanup.nodes().isEmpty()) {
      track(deletes.deleteGuaranteed(cleanup.nodes()), tracked);
    }
    if (cleanup.sweepId() != null) {
      track(deletes.sweep(lockPaths, cleanup.sweepId()), tracked);
    }
  }

  private void track(CompletableFuture<Void> task, boolean tracked) {
    if (!tracked) {
      return;
    }
    lock.lock();
    try {
      tasks++;
    } finally {
      lock.unlock();
    }
    Callbacks.when(
        task,
        (v, failure) -> {
          lock.lock();
          try {
            tasks--;
          } finally {
            lock.unlock();
          }
          settle();
        });
  }

  private void settle() {
    boolean clean;
    lock.lock();
    try {
      clean = ended && tasks == 0 && (!awaitingCreate || createAnswered);
    } finally {
      lock.unlock();
    }
    if (clean) {
      done.complete(null);
    }
  }
}

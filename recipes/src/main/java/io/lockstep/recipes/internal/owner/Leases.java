package io.lockstep.recipes.internal.owner;

import io.lockstep.recipes.internal.engine.Acquisition;
import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.Awaits;
import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.internal.engine.LiveWork;
import io.lockstep.recipes.internal.engine.LockEngine;
import io.lockstep.recipes.internal.engine.LockFailures;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.engine.Observation;
import io.lockstep.recipes.internal.engine.PlaceHooks;
import io.lockstep.recipes.internal.queue.LeaseDriver;
import io.lockstep.recipes.internal.queue.NodeNames;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.internal.zk.Scheduler;
import io.lockstep.recipes.locks.LockDriver;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockUnreachableException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;

/**
 * The leases of one counting semaphore object, in Curator's {@code InterProcessSemaphoreV2} layout:
 * lease nodes in {@code <path>/leases}, and the mutex that serializes waiters in {@code
 * <path>/locks}. Each lease is a {@link LockHold} of its own. A request runs on the engine's
 * callbacks ({@link LeaseRequest}); the blocking forms wait on its future, never on a monitor.
 *
 * <p>Observers and the Flight Recorder hear one acquisition per lease requested, with the request's
 * outcome: a fast try that finds no lease free tells them nothing and the lease that waits after
 * the mutex carries its acquisition on ({@link Observation}); the {@code locks} mutex is
 * unobserved.
 */
public final class Leases implements HoldSource {
  private final CuratorFramework client;
  private final String path;
  private final int maxLeases;
  private final LockSettings leaseSettings;
  private final LockSettings mutexSettings;
  private final Slot leaseSlot;
  private final Slot mutexSlot;
  private final Handles handles;
  private final LiveWork<LeaseRequest> waiting = // requests not ended yet, which close withdraws
      new LiveWork<>(
          (request, closed) -> {
            var unused = request.cancel(closed);
          },
          this::closedException);

  /**
   * @param path the semaphore's path, checked by the caller
   * @param maxLeases at least 1, checked by the caller
   * @param recipe the recipe's name, as observers and the Flight Recorder give it
   */
  public Leases(CuratorFramework client, String path, int maxLeases, String recipe) {
    this.client = client;
    this.path = path;
    this.maxLeases = maxLeases;
    this.leaseSettings = LockSettings.of(client, path, recipe);
    String leasesPath = ZKPaths.makePath(path, LeaseDriver.LEASES);
    String locksPath = ZKPaths.makePath(path, LeaseDriver.LOCKS);
    this.mutexSettings = LockSettings.unobserved(LockEngine.of(client), client, locksPath);
    this.leaseSlot = Slot.of(leasesPath, new LeaseDriver(maxLeases), null);
    this.mutexSlot = Slot.of(locksPath, LockDriver.mutex(), null);
    AttemptFactory attempts = AttemptFactory.plain(leaseSettings);
    this.handles = new Handles(attempts, leaseSlot::alone, null);
  }

  /**
   * Waits for {@code qty} leases.
   *
   * @param timeoutNanos the budget, or a negative value to wait as long as it takes
   * @return the leases, or an empty list if the budget ran out (nothing is left behind)
   * @throws InterruptedException if interrupted first (nothing is left behind)
   */
  public List<LockHold> acquire(int qty, long timeoutNanos) throws InterruptedException {
    return holds(attempts(qty, Budget.of(timeoutNanos, this::now)));
  }

  @Override
  public LockHold hold(Budget budget) throws InterruptedException {
    List<LockHold> got = holds(attempts(1, budget));
    return got.isEmpty() ? null : got.get(0);
  }

  /** One lease, kept by the caller (the hold of a lock object): not a handle of its own. */
  @Override
  public Attempt take(Budget budget) throws InterruptedException {
    List<Attempt> got = attempts(1, budget);
    return got.isEmpty() ? null : got.get(0);
  }

  @Override
  public Attempt takeUninterruptibly() {
    CompletableFuture<List<Attempt>> done = start(1, Budget.of(-1, this::now)).done();
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return done.get().get(0);
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          throw failure(e);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private List<Attempt> attempts(int qty, Budget budget) throws InterruptedException {
    LeaseRequest request = start(qty, budget);
    CompletableFuture<List<Attempt>> done = request.done();
    try {
      return budget.bounded() ? awaitWithin(request, budget) : done.get();
    } catch (InterruptedException e) {
      CompletableFuture<Void> cleanup = request.cancel();
      if (cleanup == null) {
        List<Attempt> won = endedWith(done, Waits.GRACE_NANOS); // ended first: a grant is kept
        if (won != null) {
          Thread.currentThread().interrupt();
          return won;
        }
      } else {
        Awaits.quietly(cleanup, Waits.GRACE_NANOS);
      }
      throw e;
    } catch (ExecutionException e) {
      if (Retries.unwrap(e.getCause()) instanceof TimeoutException) {
        return List.of();
      }
      throw failure(e);
    }
  }

  /**
   * Waits for a request with a budget. Its own timer ends it within the grace after the deadline
   * ({@link Waits#expire}); if the timers run late, the caller stops waiting {@link
   * Waits#lateTimerNanos} after the deadline and cancels it, as a blocking mutex caller does.
   *
   * @return the leases, or an empty list if the budget ran out
   */
  private static List<Attempt> awaitWithin(LeaseRequest request, Budget budget)
      throws InterruptedException, ExecutionException {
    CompletableFuture<List<Attempt>> done = request.done();
    try {
      return done.get(budget.remainingNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException ranOut) {
      try {
        return done.get(Waits.lateTimerNanos(budget), TimeUnit.NANOSECONDS);
      } catch (TimeoutException lateTimer) {
        CompletableFuture<Void> cleanup = request.cancel();
        List<Attempt> won = cleanup == null ? endedWith(done, 0) : null;
        return won == null ? List.of() : won;
      }
    }
  }

  private RuntimeException failure(ExecutionException e) {
    Throwable cause = Retries.unwrap(e.getCause());
    return cause instanceof RuntimeException runtime
        ? runtime
        : new LockException("Semaphore " + path + ": " + cause, cause);
  }

  /**
   * One lease, asynchronously: no thread waits. The stage completes on {@code executor}; cancelling
   * it withdraws the request, and a lease granted meanwhile is returned ({@link Waits#end}).
   *
   * @param timeoutNanos the budget, or a negative value for none
   */
  public CompletionStage<LockHold> acquireAsync(long timeoutNanos, Executor executor) {
    return acquireAsync(Budget.of(timeoutNanos, this::now), executor);
  }

  @Override
  public CompletionStage<LockHold> acquireAsync(Budget budget, Executor executor) {
    return requestAsync(1, budget, executor, got -> got.get(0), hold -> ((Handle) hold).abandon());
  }

  /** {@code qty} leases, all or none, as {@link #acquireAsync(long, Executor)} takes one. */
  public CompletionStage<List<LockHold>> acquireAsync(
      int qty, long timeoutNanos, Executor executor) {
    return requestAsync(
        qty, Budget.of(timeoutNanos, this::now), executor, got -> got, Leases::abandonAll);
  }

  private <T> CompletionStage<T> requestAsync(
      int qty,
      Budget budget,
      Executor executor,
      Function<List<LockHold>, T> value,
      Consumer<T> unwanted) {
    LeaseRequest request = start(qty, budget);
    CompletableFuture<T> result =
        Waits.stage(
            () -> {
              var unused = request.cancel();
            });
    Callbacks.when(
        request.done(),
        (attempts, failure) ->
            Waits.<T>end(
                result,
                executor,
                scheduler(),
                failure,
                () -> value.apply(holds(attempts)),
                unwanted));
    return result;
  }

  /**
   * Closes the semaphore object: no request starts from now on, and those still waiting are
   * withdrawn, failing with the same {@link IllegalStateException}. Idempotent.
   */
  @Override
  public void close() {
    waiting.closeAll();
  }

  @Override
  public LockSettings settings() {
    return leaseSettings;
  }

  @Override
  public boolean any() {
    return handles.any();
  }

  private LeaseRequest start(int qty, Budget budget) {
    waiting.checkOpen();
    try {
      // In the caller's thread: the mutex is started on ZooKeeper's event thread, and its create
      // then asks no user code. A failure is the mutex create's to meet again (see LeaseRequest).
      mutexSettings.resolve(mutexSlot);
    } catch (RuntimeException asked) {
      // the create asks again, off the event thread
    }
    LeaseRequest request = LeaseRequest.start(this, qty, budget);
    return waiting.track(request, request.done());
  }

  private IllegalStateException closedException() {
    return new IllegalStateException("Semaphore " + path + " is closed");
  }

  /**
   * The leases free now, read from the server: {@code maxLeases} less the lease nodes, at least 0.
   */
  public int availablePermits() {
    return Math.max(0, maxLeases - participantNodes().size());
  }

  /** The names of the lease nodes in the leases directory, read from the server. */
  public List<String> participantNodes() {
    try {
      List<String> children = client.getChildren().forPath(leaseSlot.path());
      List<String> leases = new ArrayList<>(children.size());
      for (String child : children) {
        if (NodeNames.isLockNode(child)) {
          leases.add(child);
        }
      }
      return List.copyOf(leases);
    } catch (KeeperException.NoNodeException none) {
      return List.of();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LockException("Semaphore " + path + ": interrupted reading the leases", e);
    } catch (Exception e) {
      throw LockFailures.of(path, e);
    }
  }

  /** Runs {@code command} on the engine's scheduler: where asynchronous stages complete. */
  public void execute(Runnable command) {
    scheduler().execute(command);
  }

  // ---- for LeaseRequest ----

  /** A lease attempt, carrying on {@code carried}'s acquisition for observers (or a new one). */
  Acquisition startLease(Observation carried) {
    return Acquisition.start(leaseSettings, List.of(leaseSlot), null, null, carried);
  }

  /**
   * Whether starting {@code step}'s attempt would ask the client's ACLProvider (user code): its
   * queue's node shape is not resolved yet, as at the first mutex of a semaphore object.
   */
  boolean asksAclProvider(LeaseStep step) {
    if (step instanceof LeaseStep.StartMutex) {
      return !mutexSettings.resolved(mutexSlot);
    }
    return (step instanceof LeaseStep.StartFast || step instanceof LeaseStep.StartLease)
        && !leaseSettings.resolved(leaseSlot);
  }

  Attempt startMutex(PlaceHooks hooks) {
    return Acquisition.start(mutexSettings, List.of(mutexSlot), null, hooks, null);
  }

  String description() {
    return path;
  }

  Scheduler scheduler() {
    return leaseSettings.scheduler();
  }

  CompletableFuture<Void> unreachable() {
    return leaseSettings.unreachable();
  }

  long connectionTimeoutNanos() {
    return leaseSettings.connectionTimeoutNanos();
  }

  /** Why a request ran out of budget: no lease was free in time. */
  TimeoutException busy() {
    return new TimeoutException("Semaphore " + path + ": no lease was free within the budget");
  }

  /** Why a request ends when ZooKeeper could not be reached at its deadline. */
  LockUnreachableException unreachableFailure(long timeoutNanos) {
    return LockFailures.unreachable(path, timeoutNanos);
  }

  /** Now, in nanoseconds, on the engine's clock. */
  long now() {
    return leaseSettings.now();
  }

  private List<LockHold> holds(List<Attempt> granted) {
    List<LockHold> holds = new ArrayList<>(granted.size());
    for (Attempt attempt : granted) {
      holds.add(handles.adopt(attempt));
    }
    return List.copyOf(holds);
  }

  /**
   * The grants of a request that ended on its own while we cancelled, if it completes within {@code
   * nanos}; else null, and leases it is granted later go back (never left held by nobody).
   */
  private static List<Attempt> endedWith(CompletableFuture<List<Attempt>> done, long nanos) {
    try {
      return done.get(nanos, TimeUnit.NANOSECONDS);
    } catch (ExecutionException failed) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (TimeoutException late) {
      // given back below
    }
    var unused = done.thenAccept(Leases::giveBack);
    return null;
  }

  private static void abandonAll(List<LockHold> unwanted) {
    for (LockHold lease : unwanted) {
      ((Handle) lease).abandon();
    }
  }

  private static void giveBack(List<Attempt> unwanted) {
    for (Attempt lease : unwanted) {
      var unused = lease.releaseAsync();
    }
  }
}

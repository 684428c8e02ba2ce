package io.lockstep.recipes.locks.semaphore;

import static io.lockstep.recipes.locks.semaphore.CountingSemaphoreTest.assertNoChildWatchLeft;
import static io.lockstep.recipes.locks.semaphore.CountingSemaphoreTest.childWatches;
import static io.lockstep.recipes.locks.semaphore.CountingSemaphoreTest.children;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockUnreachableException;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No orphaned lease: whatever ends a request or a hold, no lease node, no {@code locks} node and no
 * watch of it is left once the call returns (or the session ends). The extension also checks, after
 * every test, that the server holds no ephemeral node and no watch at all.
 *
 * <p>Phase x event, and the test of each cell that matters ("engine": the cell is the engine's
 * generic attempt, the same {@code Acquisition} every lock runs, and its tests cover it; "-": the
 * event cannot meet the phase):
 *
 * <table>
 *   <caption>Where a request stands when something happens</caption>
 *   <tr><th>phase</th><th>timeout</th><th>interrupt</th><th>cancel</th><th>session expiry</th>
 *       <th>connection loss</th><th>client close</th></tr>
 *   <tr><td>fast-path create (one round trip, create + read sent together)</td>
 *       <td>{@link #fastPath_withZooKeeperDown_endsUnreachableWithinTheBudget} (zero and short
 *       budgets)</td><td>engine (WithdrawnAttemptTest)</td><td>engine (WithdrawnAttemptTest)</td>
 *       <td>engine (SessionExpiryTest: requeue)</td><td>{@link CountingSemaphoreLostAnswerTest} (the
 *       create's answer lost: the node is found by its protection id, granted or given back, never
 *       duplicated; engine: LostCreateCleanupTest)</td><td>engine (ClientCloseTest)</td></tr>
 *   <tr><td>fast-path read (verdict "wait": withdrawn before any watch)</td>
 *       <td>{@code CountingSemaphoreTest.aZeroBudget_...}</td><td>engine</td><td>engine</td>
 *       <td>engine</td><td>engine</td><td>engine</td></tr>
 *   <tr><td>waiting for the mutex</td><td>{@link #waitingForTheMutex_timeout_leavesNothing}</td>
 *       <td>{@link #waitingForTheMutex_interrupt_leavesNothing}</td>
 *       <td>{@link #waitingForTheMutex_cancel_leavesNothing}</td>
 *       <td>{@link #waitingForTheMutex_sessionExpiry_queuesAgain_andIsGrantedLater}</td>
 *       <td>{@link #waitingForALease_serverRestart_keepsWaiting_andIsGrantedOnce} (the mutex
 *       waiter beside it)</td><td>{@link #waiting_clientClose_failsAtOnce_andLeavesNothing}</td></tr>
 *   <tr><td>waiting for a lease (holding the mutex, child watch armed)</td>
 *       <td>{@link #waitingForALease_timeout_leavesNothing}</td>
 *       <td>{@link #waitingForALease_interrupt_leavesNothing}</td>
 *       <td>{@code CountingSemaphoreTest.asyncAcquire_...cancellingItLeavesNothing}</td>
 *       <td>{@link #waitingForALease_sessionExpiry_takesTheMutexAgain_andIsGrantedLater}</td>
 *       <td>{@link #waitingForALease_serverRestart_keepsWaiting_andIsGrantedOnce}</td>
 *       <td>{@link #waiting_clientClose_failsAtOnce_andLeavesNothing}</td></tr>
 *   <tr><td>granted, giving the mutex back (the call not answered yet)</td><td>{@code
 *       LateWakeBudgetTest.aSemaphoreCallerWhoseTimersRunLate_...} (the caller stops waiting after
 *       its deadline; the lease goes back once the request completes)</td>
 *       <td>{@link CountingSemaphoreLateGrantTest} (the caller gives up after the grace; the lease
 *       goes back once the request completes)</td><td>{@code Waits.end} (engine: a grant after a
 *       cancel is released)</td><td>engine</td><td>engine</td><td>engine</td></tr>
 *   <tr><td>held</td><td>-</td><td>-</td><td>-</td>
 *       <td>{@link #held_sessionExpiry_isReportedLost_andClosingItDoesNotThrow}</td>
 *       <td>{@link #waitingForALease_serverRestart_keepsWaiting_andIsGrantedOnce} (AT_RISK, then
 *       HELD)</td><td>{@link #held_clientClose_isReportedLost}</td></tr>
 * </table>
 */
@Timeout(90)
class CountingSemaphoreOrphanTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** The extension checks data watches and ephemeral nodes; child watches are checked here. */
  @AfterEach
  void noChildWatchLeft() {
    CountingSemaphoreTest.assertNoChildWatchLeft(zk);
  }

  /** The holder of the only lease, the client that reads the directories, and the path. */
  private CuratorFramework observer;

  /** A request for the path's one lease through {@code client}, with a budget no test reaches. */
  private CompletableFuture<LockHold> waitAsync(CuratorFramework client) {
    return new CountingSemaphore(client, zk.path("sem"), 1)
        .acquireAsync(Duration.ofSeconds(60))
        .toCompletableFuture();
  }

  private LockHold holdTheOnlyLease() throws Exception {
    observer = zk.newClient();
    return new CountingSemaphore(zk.newClient(), zk.path("sem"), 1).acquire();
  }

  private int locks() throws Exception {
    return children(observer, zk.path("sem/locks"));
  }

  private int leases() throws Exception {
    return children(observer, zk.path("sem/leases"));
  }

  /** Another client's waiter, holding the mutex while it waits for a lease. */
  private CompletableFuture<LockHold> aWaiterAhead() throws Exception {
    CompletableFuture<LockHold> ahead =
        new CountingSemaphore(zk.newClient(), zk.path("sem"), 1)
            .acquireAsync(Duration.ofSeconds(60))
            .toCompletableFuture();
    await().atMost(Duration.ofSeconds(5)).until(() -> locks() == 1);
    return ahead;
  }

  /** No data watch of the client's session is left, and no child watch of anyone. */
  private void assertNoWatchOf(CuratorFramework client) {
    assertNoWatchOf(client, 0);
  }

  /**
   * No data watch of the client's session is left, and only {@code others} child watches of other
   * participants (a waiter ahead of it watches the leases); the server lists child watches by count
   * only.
   */
  private void assertNoWatchOf(CuratorFramework client, long others) {
    long session = Sessions.id(client);
    await()
        .atMost(Duration.ofSeconds(2))
        .untilAsserted(
            () -> {
              assertThat(zk.stats().watchedPaths(session)).isEmpty();
              assertThat(childWatches(zk)).isEqualTo(others);
            });
  }

  @Test
  void aWaitingLease_armsOneChildWatch_andCancellingRemovesItFromTheServer() throws Exception {
    LockHold held = holdTheOnlyLease();
    CompletableFuture<LockHold> waiting =
        new CountingSemaphore(zk.newClient(), zk.path("sem"), 1)
            .acquireAsync(Duration.ofSeconds(60))
            .toCompletableFuture();
    await().atMost(Duration.ofSeconds(5)).until(() -> locks() == 1 && leases() == 2);
    // one on the leases (the lease waits for a change), one on the locks (the mutex's granting
    // read, which tells its holder of the queue's next change at no cost)
    await().atMost(Duration.ofSeconds(5)).until(() -> childWatches(zk) == 2);
    assertThat(waiting.cancel(true)).isTrue();
    assertNoChildWatchLeft(zk);
    assertThat(leases()).isEqualTo(1);
    held.close();
    assertNoChildWatchLeft(zk);
  }

  @Test
  void waitingForALease_timeout_leavesNothing() throws Exception {
    LockHold held = holdTheOnlyLease();
    CuratorFramework client = zk.newClient();
    CountingSemaphore waiter = new CountingSemaphore(client, zk.path("sem"), 1);
    long start = System.nanoTime();
    assertThat(waiter.tryHold(Duration.ofMillis(500))).isEmpty();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(1_500));
    assertThat(leases()).isEqualTo(1);
    assertThat(locks()).isZero();
    assertNoWatchOf(client);
    held.close();
    assertNoChildWatchLeft(zk);
  }

  @Test
  void waitingForTheMutex_timeout_leavesNothing() throws Exception {
    LockHold held = holdTheOnlyLease();
    CompletableFuture<LockHold> ahead = aWaiterAhead();
    CuratorFramework client = zk.newClient();
    assertThat(new CountingSemaphore(client, zk.path("sem"), 1).tryHold(Duration.ofMillis(500)))
        .isEmpty();
    assertThat(locks()).isEqualTo(1);
    assertThat(leases()).isEqualTo(2); // the holder's and the waiter's ahead
    assertNoWatchOf(client, 1); // the waiter ahead's lease watch
    held.close();
    ahead.get(10, TimeUnit.SECONDS).close();
  }

  @Test
  void waitingForALease_interrupt_leavesNothing() throws Exception {
    LockHold held = holdTheOnlyLease();
    CuratorFramework client = zk.newClient();
    interruptWhile(client, () -> locks() == 1 && leases() == 2);
    assertThat(leases()).isEqualTo(1);
    assertThat(locks()).isZero();
    assertNoWatchOf(client);
    held.close();
    assertNoChildWatchLeft(zk);
  }

  @Test
  void waitingForTheMutex_interrupt_leavesNothing() throws Exception {
    LockHold held = holdTheOnlyLease();
    CompletableFuture<LockHold> ahead = aWaiterAhead();
    CuratorFramework client = zk.newClient();
    interruptWhile(client, () -> locks() == 2);
    assertThat(locks()).isEqualTo(1);
    assertThat(leases()).isEqualTo(2);
    assertNoWatchOf(client, 1); // the waiter ahead's lease watch
    held.close();
    ahead.get(10, TimeUnit.SECONDS).close();
  }

  /** Interrupts a waiter of {@code client} once {@code inPhase}; returns once it threw. */
  private void interruptWhile(
      CuratorFramework client, java.util.concurrent.Callable<Boolean> inPhase) throws Exception {
    CountingSemaphore waiter = new CountingSemaphore(client, zk.path("sem"), 1);
    CompletableFuture<Throwable> outcome = new CompletableFuture<>();
    Thread thread =
        new Thread(
            () -> {
              try {
                outcome.complete(
                    new AssertionError("acquired: " + waiter.tryHold(Duration.ofSeconds(60))));
              } catch (Throwable t) {
                outcome.complete(t);
              }
            });
    thread.start();
    await().atMost(Duration.ofSeconds(5)).until(inPhase);
    thread.interrupt();
    assertThat(outcome.get(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
  }

  @Test
  void waitingForTheMutex_cancel_leavesNothing() throws Exception {
    LockHold held = holdTheOnlyLease();
    CompletableFuture<LockHold> ahead = aWaiterAhead();
    CuratorFramework client = zk.newClient();
    CompletableFuture<LockHold> cancelled = waitAsync(client);
    await().atMost(Duration.ofSeconds(5)).until(() -> locks() == 2);
    assertThat(cancelled.cancel(true)).isTrue();
    await().atMost(Duration.ofSeconds(2)).until(() -> locks() == 1 && leases() == 2);
    assertNoWatchOf(client, 1); // the waiter ahead's lease watch
    held.close();
    ahead.get(10, TimeUnit.SECONDS).close();
  }

  @Test
  void waitingForALease_sessionExpiry_takesTheMutexAgain_andIsGrantedLater() throws Exception {
    LockHold held = holdTheOnlyLease();
    CuratorFramework client = zk.newClient();
    CompletableFuture<LockHold> waiting = waitAsync(client);
    await().atMost(Duration.ofSeconds(5)).until(() -> locks() == 1 && leases() == 2);
    long expired = Sessions.expire(client, zk.server().getConnectString());
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> Sessions.id(client) != expired && locks() == 1 && leases() == 2);
    assertThat(waiting).isNotDone();
    held.close();
    LockHold lease = waiting.get(20, TimeUnit.SECONDS);
    assertThat(lease.state()).isEqualTo(LockState.HELD);
    assertThat(leases()).isEqualTo(1);
    assertThat(locks()).isZero();
    lease.close();
  }

  @Test
  void waitingForTheMutex_sessionExpiry_queuesAgain_andIsGrantedLater() throws Exception {
    LockHold held = holdTheOnlyLease();
    CompletableFuture<LockHold> ahead = aWaiterAhead();
    CuratorFramework client = zk.newClient();
    CompletableFuture<LockHold> waiting = waitAsync(client);
    await().atMost(Duration.ofSeconds(5)).until(() -> locks() == 2);
    long expired = Sessions.expire(client, zk.server().getConnectString());
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> Sessions.id(client) != expired && locks() == 2);
    held.close();
    ahead.get(10, TimeUnit.SECONDS).close();
    LockHold lease = waiting.get(20, TimeUnit.SECONDS);
    assertThat(leases()).isEqualTo(1);
    lease.close();
  }

  @Test
  void waitingForALease_serverRestart_keepsWaiting_andIsGrantedOnce() throws Exception {
    observer = zk.newClient();
    LockHold held = new CountingSemaphore(zk.newClient(), zk.path("sem"), 1).acquire();
    CompletableFuture<LockHold> waiting =
        new CountingSemaphore(zk.newClient(), zk.path("sem"), 1)
            .acquireAsync(Duration.ofSeconds(60))
            .toCompletableFuture();
    CompletableFuture<LockHold> behind =
        new CountingSemaphore(zk.newClient(), zk.path("sem"), 1)
            .acquireAsync(Duration.ofSeconds(60))
            .toCompletableFuture();
    await().atMost(Duration.ofSeconds(5)).until(() -> locks() == 2 && leases() == 2);

    zk.server().stop();
    await().atMost(Duration.ofSeconds(20)).until(() -> held.state() == LockState.AT_RISK);
    zk.server().restart();
    await().atMost(Duration.ofSeconds(30)).until(() -> held.state() == LockState.HELD);
    await().atMost(Duration.ofSeconds(10)).until(() -> locks() == 2 && leases() == 2);
    assertThat(waiting).isNotDone();
    assertThat(behind).isNotDone();

    held.close();
    // Whichever of the two took the mutex first is granted; the other waits its turn.
    LockHold first = (LockHold) CompletableFuture.anyOf(waiting, behind).get(20, TimeUnit.SECONDS);
    CompletableFuture<LockHold> second = waiting.getNow(null) == first ? behind : waiting;
    await().atMost(Duration.ofSeconds(5)).until(() -> locks() == 1 && leases() == 2);
    assertThat(second).isNotDone();
    first.close();
    second.get(20, TimeUnit.SECONDS).close();
  }

  @Test
  void waiting_clientClose_failsAtOnce_andLeavesNothing() throws Exception {
    LockHold held = holdTheOnlyLease();
    CuratorFramework client = zk.newClient();
    CompletableFuture<LockHold> waiting = waitAsync(client);
    await().atMost(Duration.ofSeconds(5)).until(() -> locks() == 1 && leases() == 2);
    client.close();
    assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(LockException.class);
    await().atMost(Duration.ofSeconds(10)).until(() -> locks() == 0 && leases() == 1);
    held.close();
    assertNoChildWatchLeft(zk);
  }

  @Test
  void held_sessionExpiry_isReportedLost_andClosingItDoesNotThrow() throws Exception {
    observer = zk.newClient();
    CuratorFramework client = zk.newClient();
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("sem"), 2);
    List<LockHold> both = semaphore.tryHold(2, Duration.ofSeconds(5));
    Sessions.expire(client, zk.server().getConnectString());
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> both.stream().allMatch(lease -> lease.state() == LockState.LOST));
    assertThatThrownBy(both.get(0)::checkHeld).isInstanceOf(LockOwnershipLostException.class);
    assertThatThrownBy(both.get(1)::fencingToken).isInstanceOf(LockOwnershipLostException.class);
    both.forEach(LockHold::close);
    Optional<LockHold> again =
        new CountingSemaphore(zk.newClient(), zk.path("sem"), 2).tryHold(Duration.ofSeconds(5));
    assertThat(again).isPresent();
    assertThat(leases()).isEqualTo(1);
    again.get().close();
  }

  @Test
  void held_clientClose_isReportedLost() throws Exception {
    observer = zk.newClient();
    CuratorFramework client = zk.newClient();
    LockHold lease = new CountingSemaphore(client, zk.path("sem"), 1).acquire();
    client.close();
    await().atMost(Duration.ofSeconds(5)).until(() -> lease.state() == LockState.LOST);
    lease.close();
    await().atMost(Duration.ofSeconds(10)).until(() -> leases() == 0);
  }

  @Test
  void fastPath_withZooKeeperDown_endsUnreachableWithinTheBudget() throws Exception {
    CuratorFramework client = zk.newClient();
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("sem"), 1);
    zk.server().stop();
    try {
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> !client.getZookeeperClient().isConnected());
      for (Duration budget : List.of(Duration.ZERO, Duration.ofMillis(500))) {
        long start = System.nanoTime();
        assertThatThrownBy(() -> semaphore.tryHold(budget))
            .isInstanceOf(LockUnreachableException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start))
            .isLessThan(budget.plusMillis(200 + 500));
      }
      CompletableFuture<LockHold> async =
          semaphore.acquireAsync(Duration.ofMillis(300)).toCompletableFuture();
      assertThatThrownBy(() -> async.get(2, TimeUnit.SECONDS))
          .hasCauseInstanceOf(LockUnreachableException.class);
    } finally {
      zk.server().restart();
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> client.getZookeeperClient().isConnected());
  }
}

package io.lockstep.recipes.micrometer;

import static io.lockstep.recipes.micrometer.ObservationLedger.high;
import static io.lockstep.recipes.micrometer.ObservationLedger.low;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockUnreachableException;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.reactor.ReactiveLocks;
import io.lockstep.testing.ZooKeeperExtension;
import io.micrometer.observation.Observation;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;

/**
 * More of docs/tracing.md's promises, form by form, against a real server: the read and the write
 * lock, a read-sharing reader that joins a held read, the counting semaphore's leases (one,
 * several, queued), the Reactor forms, and an untimed acquire that finds ZooKeeper unreachable.
 * Each wait and hold is under the observation current in the thread that called, and every
 * observation started is stopped exactly once.
 */
@Timeout(90)
class LockstepObservationsMoreFormsTest extends ObservedFormsBase {
  private static final Duration LONG = Duration.ofSeconds(10);

  private ReadWriteMutex sharingReads(String name) {
    return ReadWriteMutex.builder(client, zk.path(name)).localHandoff().build();
  }

  @Test
  void theReadAndTheWriteLock_areUnderTheCallersObservation() throws Exception {
    ReadWriteMutex lock = new ReadWriteMutex(client, zk.path("rw"));

    Observation request =
        under(
            "request",
            () -> {
              lock.readLock().acquire();
              lock.readLock().release();
              lock.writeLock().hold().close();
              lock.readLock().tryHold(LONG).orElseThrow().close();
              lock.writeLock()
                  .acquireAsync()
                  .toCompletableFuture()
                  .get(10, TimeUnit.SECONDS)
                  .close();
            });

    ledger.assertAllUnder(request, 4, 4);
    assertThat(ledger.waits().stream().map(wait -> low(wait, "recipe")))
        .containsExactly(
            "ReadWriteMutex.ReadLock",
            "ReadWriteMutex.WriteLock",
            "ReadWriteMutex.ReadLock",
            "ReadWriteMutex.WriteLock");
  }

  /**
   * A reader of this process joins the read node another reader holds, in memory: its wait and hold
   * are under its own caller's observation, not the holding reader's.
   */
  @Test
  void aReadSharingReader_joiningAHeldRead_isUnderItsCallersObservation() throws Exception {
    ReadWriteMutex first = sharingReads("shared");
    ReadWriteMutex second = sharingReads("shared");

    under(
        "holding",
        () -> {
          LockHold held = first.readLock().hold();
          under("request", () -> joined(first, second).close());
          held.close();
        });

    assertThat(ledger.parentsOf(LockstepObservations.ACQUIRE))
        .containsExactly("holding", "request");
    assertThat(ledger.parentsOf(LockstepObservations.HOLD)).containsExactly("holding", "request");
  }

  /** {@code second}'s read hold, joined to the node {@code first} holds: still one node. */
  private static LockHold joined(ReadWriteMutex first, ReadWriteMutex second) throws Exception {
    LockHold hold = second.readLock().hold();
    assertThat(first.readLock().getParticipantNodes()).as("one shared read node").hasSize(1);
    return hold;
  }

  /**
   * A reader that joined a held read has no token at its grant (the read node's is the first
   * reader's); asked for one, it takes its own node's. Its hold's observation carries that token,
   * as every hold that took one does.
   */
  @Test
  void aReadSharingReader_thatJoinedAndTookItsToken_holdCarriesIt() throws Exception {
    ReadWriteMutex first = sharingReads("token");
    ReadWriteMutex second = sharingReads("token");
    LockHold held = first.readLock().hold();
    LockHold joiner = joined(first, second);
    long token = joiner.fencingToken();
    assertThat(token).isGreaterThan(held.fencingToken());
    joiner.close();
    held.close();

    await().until(() -> ledger.holds().size() == 2 && ledger.isStopped(ledger.holds().get(1)));
    Observation.Context hold = ledger.holds().get(1);
    assertThat(low(hold, "state")).isEqualTo("RELEASED");
    assertThat(high(hold, "token")).as("the token it took").isEqualTo(Long.toString(token));
  }

  @Test
  void aSemaphoresSingleLease_isUnderTheCallersObservation_inEveryForm() throws Exception {
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("one"), 2);

    Observation request =
        under(
            "request",
            () -> {
              semaphore.acquire().close();
              semaphore.hold().close();
              semaphore.tryHold(LONG).orElseThrow().close();
              semaphore.acquireAsync().toCompletableFuture().get(10, TimeUnit.SECONDS).close();
            });

    ledger.assertAllUnder(request, 4, 4);
  }

  /**
   * Several leases: the request starts each lease after the one before it has its verdict, on
   * Lockstep's threads; every wait and hold is the caller's all the same.
   */
  @Test
  void severalLeases_areEachUnderTheCallersObservation() throws Exception {
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("several"), 3);

    ledger.assertAllUnder(underRequest(() -> closeAll(semaphore.acquire(3))), 3, 3);
    closeAll(inRequest(() -> leases(semaphore, 2)));
    assertThat(ledger.parentsOf(LockstepObservations.ACQUIRE)).hasSize(5).containsOnly("request");
    assertThat(ledger.parentsOf(LockstepObservations.HOLD)).hasSize(5).containsOnly("request");
  }

  /**
   * A request for several leases that has to queue: it takes one, finds no other free, gives it
   * back, queues for the semaphore's mutex and then takes both. Every lease's wait (and the hold of
   * each it was granted) is under the caller's observation.
   */
  @Test
  void severalLeases_thatQueue_areEachUnderTheCallersObservation() throws Exception {
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("queued"), 2);
    LockHold elsewhere =
        new CountingSemaphore(zk.newClient(), zk.path("queued"), 2).tryHold(LONG).orElseThrow();

    CompletableFuture<List<LockHold>> both =
        CompletableFuture.supplyAsync(() -> inRequest(() -> leases(semaphore, 2)));
    await().until(() -> queuedForTheMutex(zk.path("queued")));
    elsewhere.close();
    assertBothLeasesUnderTheRequest(both);
  }

  /** The same asynchronously: {@code acquireAsync(qty, timeout)} called in the caller's scope. */
  @Test
  void severalLeasesAsync_thatQueue_areEachUnderTheCallersObservation() throws Exception {
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("queuedAsync"), 2);
    LockHold elsewhere =
        new CountingSemaphore(zk.newClient(), zk.path("queuedAsync"), 2)
            .tryHold(LONG)
            .orElseThrow();

    CompletableFuture<List<LockHold>> both =
        inRequest(() -> semaphore.acquireAsync(2, LONG).toCompletableFuture());
    await().until(() -> queuedForTheMutex(zk.path("queuedAsync")));
    elsewhere.close();
    assertBothLeasesUnderTheRequest(both);
  }

  /**
   * Two leases granted, then closed; every lease's wait and hold (a lease taken on the fast path
   * and given back to queue has them too) under the caller's observation.
   */
  private void assertBothLeasesUnderTheRequest(CompletableFuture<List<LockHold>> both)
      throws Exception {
    List<LockHold> granted = both.get(20, TimeUnit.SECONDS);
    assertThat(granted).hasSize(2);
    closeAll(granted);

    assertThat(ledger.parentsOf(LockstepObservations.ACQUIRE)).hasSizeGreaterThanOrEqualTo(2);
    assertThat(ledger.parentsOf(LockstepObservations.ACQUIRE)).containsOnly("request");
    assertThat(ledger.parentsOf(LockstepObservations.HOLD)).hasSizeGreaterThanOrEqualTo(2);
    assertThat(ledger.parentsOf(LockstepObservations.HOLD)).containsOnly("request");
  }

  /** Whether a request waits under the semaphore's mutex: its node in {@code locks}. */
  private boolean queuedForTheMutex(String path) throws Exception {
    return !ZooKeeperExtension.childrenOrNone(client, path + "/locks").isEmpty();
  }

  /** A single lease that queues: its acquisition is carried on by the lease after the mutex. */
  @Test
  void aQueuedAsynchronousLease_isUnderTheCallersObservation() throws Exception {
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("async"), 1);
    LockHold elsewhere =
        new CountingSemaphore(zk.newClient(), zk.path("async"), 1).tryHold(LONG).orElseThrow();

    CompletableFuture<LockHold> pending =
        inRequest(() -> semaphore.acquireAsync().toCompletableFuture());
    await().until(() -> queuedForTheMutex(zk.path("async")));
    elsewhere.close();
    pending.get(10, TimeUnit.SECONDS).close();

    assertThat(ledger.parentsOf(LockstepObservations.ACQUIRE)).containsExactly("request");
    assertThat(ledger.parentsOf(LockstepObservations.HOLD)).containsExactly("request");
  }

  private static List<LockHold> leases(CountingSemaphore semaphore, int qty) {
    try {
      return semaphore.tryHold(qty, Duration.ofSeconds(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static void closeAll(List<LockHold> holds) {
    holds.forEach(LockHold::close);
  }

  /** Reactor's forms acquire when subscribed to: here, in the subscribing caller's thread. */
  @Test
  void theReactorForms_subscribedInTheCallersThread_areUnderItsObservation() throws Exception {
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("reactor"));

    ledger.assertAllUnder(underRequest(() -> subscribedHere(lock)), 3, 3);
  }

  /** Each of Reactor's forms on {@code lock}, subscribed to and waited for in this thread. */
  private static void subscribedHere(ReentrantMutex lock) {
    ReactiveLocks.hold(lock).block(LONG).close();
    ReactiveLocks.hold(lock, LONG).block(LONG).close();
    assertThat(ReactiveLocks.withLock(lock, hold -> Mono.just(1)).blockLast(LONG)).isEqualTo(1);
  }

  /**
   * An untimed acquire has no budget: it fails once the retry policy gives up. Its wait ends once,
   * UNREACHABLE, under the caller's observation, and no hold begins.
   */
  @Test
  void anUntimedAcquire_withZooKeeperUnreachable_endsUnreachableOnce() throws Exception {
    CuratorFramework impatient =
        zk.newClient(
            b ->
                b.connectString(zk.proxy().connectString())
                    .connectionTimeoutMs(1_000)
                    .retryPolicy(new RetryNTimes(1, 100)));
    try (LockstepObservations bound = LockstepObservations.bind(impatient, registry)) {
      ReentrantMutex lock = new ReentrantMutex(impatient, zk.path("unreachable"));
      zk.proxy().cut();
      await().until(() -> !impatient.getZookeeperClient().isConnected());

      under(
          "request",
          () -> assertThatThrownBy(lock::acquire).isInstanceOf(LockUnreachableException.class));

      assertThat(ledger.outcomesOnceStopped(1)).containsExactly("UNREACHABLE");
      assertThat(ledger.parentsOf(LockstepObservations.ACQUIRE)).containsExactly("request");
      assertThat(ledger.holds()).isEmpty();
    }
  }
}

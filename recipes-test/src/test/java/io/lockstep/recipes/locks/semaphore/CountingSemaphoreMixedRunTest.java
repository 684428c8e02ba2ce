package io.lockstep.recipes.locks.semaphore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Curator's and Lockstep's semaphores on one path, several clients of each, while the harness
 * expires sessions and restarts the server: never more than {@code maxLeases} holders at once.
 *
 * <p>A hold counts from the moment its acquire returned until just before its release, or until its
 * session ended (recorded before the harness expires it): after that the server has deleted its
 * lease and may grant it again while the old holder still runs, which only fencing can guard.
 */
@Timeout(120)
class CountingSemaphoreMixedRunTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** The extension checks data watches and ephemeral nodes; child watches are checked here. */
  @AfterEach
  void noChildWatchLeft() {
    CountingSemaphoreTest.assertNoChildWatchLeft(zk);
  }

  private static final int MAX = 3;

  /** One hold: who, in which session, from when to when (nanoTime; end -1 while it lasts). */
  private record Hold(String holder, long session, long start, long end) {}

  private final ConcurrentLinkedQueue<Hold> holds = new ConcurrentLinkedQueue<>();
  private final Map<Long, Long> sessionsEnded = new ConcurrentHashMap<>();

  @Test
  void mixedClients_underSessionExpiriesAndARestart_neverHoldMoreThanMaxLeases() throws Exception {
    String path = zk.path("sem");
    List<CuratorFramework> curatorClients = zk.newClients(2);
    List<CuratorFramework> ourClients = zk.newClients(2);
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger curatorHolds = new AtomicInteger();
    AtomicInteger ourHolds = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<?>> workers = new ArrayList<>();
    for (int w = 0; w < 4; w++) {
      CuratorFramework curatorClient = curatorClients.get(w % 2);
      InterProcessSemaphoreV2 curator = new InterProcessSemaphoreV2(curatorClient, path, MAX);
      workers.add(pool.submit(() -> curatorWorker(curator, curatorClient, stop, curatorHolds)));
      CuratorFramework ourClient = ourClients.get(w % 2);
      CountingSemaphore ours = new CountingSemaphore(ourClient, path, MAX);
      workers.add(pool.submit(() -> ourWorker(ours, ourClient, stop, ourHolds)));
    }
    try {
      List<CuratorFramework> all = new ArrayList<>(curatorClients);
      all.addAll(ourClients);
      for (int round = 0; round < 4; round++) {
        int holdsBefore = curatorHolds.get() + ourHolds.get();
        await()
            .atMost(Duration.ofSeconds(20))
            .until(() -> curatorHolds.get() + ourHolds.get() >= holdsBefore + 10);
        CuratorFramework victim = all.get(round);
        long session = Sessions.id(victim);
        sessionsEnded.put(session, System.nanoTime());
        Sessions.expire(victim, zk.server().getConnectString());
      }
      int holdsBefore = curatorHolds.get() + ourHolds.get();
      zk.server().restart();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> curatorHolds.get() + ourHolds.get() >= holdsBefore + 20);
    } finally {
      stop.set(true);
      for (Future<?> worker : workers) {
        worker.get(30, TimeUnit.SECONDS);
      }
      pool.shutdownNow();
    }
    assertThat(curatorHolds.get()).isPositive();
    assertThat(ourHolds.get()).isPositive();
    assertThat(mostAtOnce()).isBetween(1, MAX);
  }

  private Void curatorWorker(
      InterProcessSemaphoreV2 semaphore,
      CuratorFramework client,
      AtomicBoolean stop,
      AtomicInteger count) {
    while (!stop.get()) {
      Lease lease;
      try {
        lease = semaphore.acquire(2, TimeUnit.SECONDS);
      } catch (Exception e) {
        continue; // connection loss, expiry: try again
      }
      if (lease == null) {
        continue;
      }
      long session = Sessions.id(client);
      long start = System.nanoTime();
      work();
      holds.add(new Hold("curator", session, start, System.nanoTime()));
      count.incrementAndGet();
      semaphore.returnLease(lease);
    }
    return null;
  }

  private Void ourWorker(
      CountingSemaphore semaphore, CuratorFramework client, AtomicBoolean stop, AtomicInteger count)
      throws InterruptedException {
    while (!stop.get()) {
      Optional<LockHold> lease;
      try {
        lease = semaphore.tryHold(Duration.ofSeconds(2));
      } catch (RuntimeException e) {
        continue; // unreachable, retries exhausted: try again
      }
      if (lease.isEmpty()) {
        continue;
      }
      try (LockHold hold = lease.get()) {
        long session = Sessions.id(client);
        long start = System.nanoTime();
        work();
        holds.add(new Hold("lockstep", session, start, System.nanoTime()));
        count.incrementAndGet();
      }
    }
    return null;
  }

  /** A few milliseconds of work while holding. */
  private static void work() {
    CountDownLatch never = new CountDownLatch(1);
    try {
      never.await(5, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The most holds that counted at one moment: a sweep over starts and (effective) ends. */
  private int mostAtOnce() {
    List<long[]> events = new ArrayList<>();
    for (Hold hold : holds) {
      long end = Math.min(hold.end(), sessionsEnded.getOrDefault(hold.session(), Long.MAX_VALUE));
      if (end > hold.start()) {
        events.add(new long[] {hold.start(), 1});
        events.add(new long[] {end, -1});
      }
    }
    events.sort(Comparator.<long[]>comparingLong(e -> e[0]).thenComparingLong(e -> e[1]));
    int now = 0;
    int most = 0;
    for (long[] event : events) {
      now += (int) event[1];
      most = Math.max(most, now);
    }
    return most;
  }
}

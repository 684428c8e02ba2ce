package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Ten thousand asynchronous waiters on one lock through one client: no thread per waiter, and the
 * lock passes from one to the next in queue order.
 */
@Timeout(600)
class ManyWaitersTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final int WAITERS = 10_000;

  @Test
  void tenThousandAsyncWaiters_areGrantedInQueueOrder_withFewerThanFiftyThreads() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock"));
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    AtomicInteger mostThreads = new AtomicInteger(threads.getThreadCount());
    ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
    var unused =
        sampler.scheduleAtFixedRate(
            () -> mostThreads.accumulateAndGet(threads.getThreadCount(), Math::max),
            0,
            10,
            TimeUnit.MILLISECONDS);
    try {
      LockHold first = lock.hold(); // everyone queues behind this hold
      long start = System.nanoTime();
      ConcurrentLinkedQueue<Integer> grantOrder = new ConcurrentLinkedQueue<>();
      List<CompletableFuture<Void>> all = new ArrayList<>(WAITERS);
      for (int i = 0; i < WAITERS; i++) {
        int waiter = i;
        all.add(
            lock.acquireAsync()
                .thenAccept(
                    hold -> {
                      grantOrder.add(waiter);
                      hold.close();
                    })
                .toCompletableFuture());
      }
      await("all queued")
          .atMost(Duration.ofMinutes(5))
          .pollInterval(Duration.ofSeconds(1))
          .until(() -> lock.getParticipantNodes().size() == WAITERS + 1);

      long queued = System.nanoTime();
      first.close();
      CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).get(5, TimeUnit.MINUTES);
      System.out.printf(
          "%d waiters queued in %d ms, drained in %d ms, at most %d live threads%n",
          WAITERS,
          TimeUnit.NANOSECONDS.toMillis(queued - start),
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - queued),
          mostThreads.get());

      assertThat(List.copyOf(grantOrder)).hasSize(WAITERS).isSorted();
      assertThat(mostThreads.get()).as("live threads at most").isLessThan(50);
      assertThat(lock.isAcquiredInThisProcess()).isFalse();
    } finally {
      sampler.shutdownNow();
    }
  }
}

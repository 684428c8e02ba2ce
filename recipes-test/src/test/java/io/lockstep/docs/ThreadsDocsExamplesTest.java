package io.lockstep.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.locks.ClientTime;
import io.lockstep.recipes.locks.LockAttempt;
import io.lockstep.recipes.locks.LockObserver;
import io.lockstep.recipes.locks.LockObservers;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The examples of docs/threads.md, run as shown (see {@link DocsExamplesTest} for the rules). */
@Timeout(60)
class ThreadsDocsExamplesTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void threads_yourTestsClock_drivesTheDurationsReported() throws Exception {
    // docs/threads.md: your tests' clock
    // import io.lockstep.recipes.locks.ClientTime;
    // import io.lockstep.recipes.locks.ReentrantMutex;
    // import java.util.concurrent.Executors;
    // import java.util.concurrent.ScheduledExecutorService;
    // import java.util.concurrent.atomic.AtomicLong;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient(); // docs: ... started, no recipes made with it yet
    AtomicLong ticker = new AtomicLong(); // the test moves time on by hand
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    ClientTime.use(client, ticker::get, scheduler);
    ReentrantMutex mutex = new ReentrantMutex(client, "/locks/orders");
    // docs: end
    try {
      List<Duration> held = new CopyOnWriteArrayList<>();
      LockObservers.of(client)
          .addListener(
              new LockObserver() {
                @Override
                public void released(LockAttempt attempt, Duration duration, long token) {
                  held.add(duration);
                }
              });

      mutex.acquire();
      ticker.addAndGet(TimeUnit.MINUTES.toNanos(3)); // three minutes pass, on the test's clock
      mutex.release();

      assertThat(held).containsExactly(Duration.ofMinutes(3));
    } finally {
      scheduler.shutdownNow();
    }
  }
}

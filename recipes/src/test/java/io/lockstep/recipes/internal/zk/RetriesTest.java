package io.lockstep.recipes.internal.zk;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A read retried after a failure while the client is disconnected goes ahead as soon as the client
 * is connected again, however long the policy's delay; once, not twice. Server-less: the scheduler
 * is driven by hand.
 */
@Timeout(10)
class RetriesTest {
  /** Runs executed tasks at once and keeps delayed ones until {@link #fireDelayed}. */
  private static final class HandScheduler implements Scheduler {
    final List<Runnable> delayed = new ArrayList<>();
    final List<Long> delays = new ArrayList<>();

    @Override
    public void schedule(long delayMillis, Runnable task) {
      delays.add(delayMillis);
      delayed.add(task);
    }

    @Override
    public void execute(Runnable task) {
      task.run();
    }

    void fireDelayed() {
      List<Runnable> due = new ArrayList<>(delayed);
      delayed.clear();
      due.forEach(Runnable::run);
    }
  }

  private final HandScheduler scheduler = new HandScheduler();
  private final AtomicInteger sent = new AtomicInteger();

  /** Fails with connection loss until {@code failures} sends have failed, then answers "ok". */
  private CompletableFuture<String> send(int failures) {
    return sent.incrementAndGet() <= failures
        ? CompletableFuture.failedFuture(new KeeperException.ConnectionLossException())
        : CompletableFuture.completedFuture("ok");
  }

  @Test
  void aRetryWaitingOutItsDelay_goesAheadWhenTheClientIsConnectedAgain() {
    CompletableFuture<Void> connected = new CompletableFuture<>();
    Retries retries =
        new Retries(() -> new RetryNTimes(5, 60_000), System::nanoTime, () -> connected);

    CompletableFuture<String> result = retries.retrying(() -> send(1), scheduler, () -> true);
    assertThat(sent).hasValue(1);
    assertThat(scheduler.delays).containsExactly(60_000L);
    assertThat(result).isNotDone();

    connected.complete(null);
    assertThat(result).isCompletedWithValue("ok");
    assertThat(sent).hasValue(2);

    scheduler.fireDelayed();
    assertThat(sent).as("the delay's timer finds the retry done").hasValue(2);
  }

  @Test
  void whileConnected_aRetryWaitsOutThePolicysDelay() {
    Retries retries =
        new Retries(
            () -> new RetryNTimes(5, 60_000),
            System::nanoTime,
            () -> CompletableFuture.completedFuture(null));

    CompletableFuture<String> result = retries.retrying(() -> send(1), scheduler, () -> true);
    assertThat(result).isNotDone();
    assertThat(sent).hasValue(1);

    scheduler.fireDelayed();
    assertThat(result).isCompletedWithValue("ok");
    assertThat(sent).hasValue(2);
  }
}

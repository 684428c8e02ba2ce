package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZeroBudgetTry;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The {@link java.util.concurrent.locks.Lock} view keeps {@code Lock}'s contract. */
@Timeout(60)
class LockViewTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void lock_waitsThroughAnInterrupt_andKeepsTheFlag() throws Exception {
    ReentrantMutex holder = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    Lock view = new ReentrantMutex(zk.newClient(), zk.path("lock")).asLock();
    holder.acquire();
    try (LockThread thread = new LockThread("locker")) {
      CompletableFuture<Boolean> locked =
          thread.call(
              () -> {
                view.lock();
                boolean interrupted = Thread.interrupted();
                view.unlock();
                return interrupted;
              });
      await().until(() -> holder.getParticipantNodes().size() == 2);
      thread.thread().interrupt();
      await("the interrupt does not end the wait")
          .during(Duration.ofMillis(300))
          .atMost(Duration.ofSeconds(5))
          .until(() -> !locked.isDone() && holder.getParticipantNodes().size() == 2);

      holder.release();

      assertThat(locked.get(10, TimeUnit.SECONDS)).as("interrupt flag kept").isTrue();
    }
  }

  @Test
  void lockInterruptibly_givesInToAnInterrupt() throws Exception {
    ReentrantMutex holder = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    Lock view = new ReentrantMutex(zk.newClient(), zk.path("lock")).asLock();
    holder.acquire();
    try (LockThread thread = new LockThread("locker")) {
      CompletableFuture<Void> locking = thread.run(view::lockInterruptibly);
      await().until(() -> holder.getParticipantNodes().size() == 2);
      thread.thread().interrupt();
      assertThatThrownBy(() -> locking.get(10, TimeUnit.SECONDS))
          .hasCauseInstanceOf(InterruptedException.class);
    }
    assertThat(holder.getParticipantNodes()).hasSize(1);
    holder.release();
  }

  @Test
  void tryLock_triesOnce_andUnlockByAnotherThreadIsRefused() throws Exception {
    ReentrantMutex mutex = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    LockView view = mutex.asLock();
    Lock other = new ReentrantMutex(zk.newClient(), zk.path("lock")).asLock();

    ZeroBudgetTry.granted(
        "tryLock() of a free lock", view::tryLock, () -> view.tryLock(10, TimeUnit.SECONDS));
    assertThat(view.fencingToken()).isEqualTo(mutex.fencingToken());
    assertThat(view.fencedLock()).isSameAs(mutex);
    try (LockThread thread = new LockThread("stranger")) {
      assertThat(thread.call(other::tryLock).get(10, TimeUnit.SECONDS)).isFalse();
      assertThatThrownBy(() -> thread.run(view::unlock).get(10, TimeUnit.SECONDS))
          .hasCauseInstanceOf(IllegalMonitorStateException.class);
    }
    assertThat(view.tryLock(1, TimeUnit.SECONDS)).as("reentrant").isTrue();
    view.unlock();
    view.unlock();
    assertThatThrownBy(view::unlock).isInstanceOf(IllegalMonitorStateException.class);
    assertThatThrownBy(view::newCondition).isInstanceOf(UnsupportedOperationException.class);
    assertThat(mutex.getParticipantNodes()).isEmpty();
  }

  @Test
  void tryLock_onAnInterruptedThread_stillTriesOnce_andKeepsTheFlag() throws Exception {
    Lock view = new ReentrantMutex(zk.newClient(), zk.path("lock")).asLock();
    Thread.currentThread().interrupt();
    boolean granted = false;
    try {
      granted = ZeroBudgetTry.once("tryLock() on an interrupted thread", view::tryLock, b -> b);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
      if (granted) {
        view.unlock();
      }
    }
  }

  // Issue 21: Lock.tryLock(time) with a time of zero or less must not wait, and must not throw.
  @Test
  void tryLockWithANegativeTime_makesOneAttempt_asLockSays() throws Exception {
    ReentrantMutex holder = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    Lock view = new ReentrantMutex(zk.newClient(), zk.path("lock")).asLock();

    assertThat(view.tryLock(-5, TimeUnit.SECONDS)).as("a free lock").isTrue();
    view.unlock();
    holder.acquire();
    try {
      assertThat(view.tryLock(-1, TimeUnit.MILLISECONDS)).as("a held lock").isFalse();
    } finally {
      holder.release();
    }
    assertThat(holder.getParticipantNodes()).isEmpty();
  }

  // Issue 21: the Duration form keeps the same contract.
  @Test
  void tryLockWithADuration_waitsItsTime_andANegativeOneMakesOneAttempt() throws Exception {
    ReentrantMutex holder = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    LockView view = new ReentrantMutex(zk.newClient(), zk.path("lock")).asLock();

    assertThat(view.tryLock(Duration.ofSeconds(-5))).as("a free lock").isTrue();
    view.unlock();
    holder.acquire();
    try (LockThread thread = new LockThread("locker")) {
      assertThat(thread.call(() -> view.tryLock(Duration.ofMillis(-1))).get(10, TimeUnit.SECONDS))
          .as("a held lock, one attempt")
          .isFalse();
      assertThat(thread.call(() -> view.tryLock(Duration.ofMillis(200))).get(10, TimeUnit.SECONDS))
          .as("a held lock, 200 ms")
          .isFalse();
      CompletableFuture<Boolean> waiting =
          thread.call(() -> view.tryLock(Duration.ofSeconds(Long.MAX_VALUE)));
      await().until(() -> holder.getParticipantNodes().size() == 2);

      holder.release();

      assertThat(waiting.get(10, TimeUnit.SECONDS))
          .as("a timeout too long for nanoseconds")
          .isTrue();
      thread.run(view::unlock).get(10, TimeUnit.SECONDS);
    }
    assertThat(holder.getParticipantNodes()).isEmpty();
  }

  // Issue 21: ReentrantLock throws InterruptedException for a set flag even when reentrant.
  @Test
  void aReentrantLockInterruptiblyOrTimedTryLock_withTheFlagSet_throwsAndKeepsTheHold()
      throws Exception {
    ReentrantMutex mutex = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    Lock view = mutex.asLock();
    view.lock();
    try {
      Thread.currentThread().interrupt();
      assertThatThrownBy(view::lockInterruptibly).isInstanceOf(InterruptedException.class);
      assertThat(Thread.interrupted()).as("the flag is cleared, as ReentrantLock does").isFalse();
      Thread.currentThread().interrupt();
      assertThatThrownBy(() -> view.tryLock(1, TimeUnit.SECONDS))
          .isInstanceOf(InterruptedException.class);
      assertThat(mutex.getHoldCount()).as("no count was added").isEqualTo(1);
    } finally {
      Thread.interrupted();
      view.unlock();
    }
    assertThat(mutex.getParticipantNodes()).isEmpty();
  }
}

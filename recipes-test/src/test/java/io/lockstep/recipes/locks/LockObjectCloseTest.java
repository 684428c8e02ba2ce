package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.internal.engine.LockEngine;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code close()} of a mutex on a real server. The last lock object on a kept place gives it back;
 * closing never touches holds and acquires under way; a closed object takes no new hold and sends
 * nothing for it; a place nobody uses is dropped from the client's memory. The server-less table is
 * PlaceClosingTest; here each phase of the place meets the close (a test per cell):
 *
 * <pre>
 * place \ close of    | the last open lock object           | one of two lock objects
 * kept (lingering)    | given back at once, no watch left   | kept for the other, 0 requests
 * held                | hold goes on; given back at release | held; kept at release
 * held, local waiter  | waiter holds; given back after it   | -
 * none                | nothing sent; dropped from memory   | -
 * </pre>
 */
@Timeout(60)
class LockObjectCloseTest {
  @org.junit.jupiter.api.extension.RegisterExtension
  static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final Duration LONG = Duration.ofMinutes(1);

  private static ReentrantMutex lingering(CuratorFramework client, String path) {
    return ReentrantMutex.builder(client, path).linger(LONG).build();
  }

  // ---- a kept place ----

  @Test
  void closingTheLastLockObject_givesTheKeptPlaceBackAtOnce_andLeavesNoWatch() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = lingering(client, path);
    lock.acquire();
    lock.release();
    assertThat(children(client, path)).as("kept").hasSize(1);

    lock.close();

    await("the kept node deleted").until(() -> children(client, path).isEmpty());
    InterProcessMutex curator = new InterProcessMutex(zk.newClient(), path);
    assertThat(curator.acquire(0, TimeUnit.SECONDS)).as("nobody holds: at once").isTrue();
    curator.release();
    await("no child watch left").until(() -> zk.stats().monitor("zk_watch_count") == 0);
  }

  @Test
  void closingOneOfTwoLockObjects_keepsThePlaceForTheOther_andTheLastCloseGivesItBack()
      throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex a = lingering(client, path);
    ReentrantMutex b = lingering(client, path);
    a.acquire();
    a.release();
    String kept = children(client, path).get(0);

    a.close();
    long before = zk.requestsSoFar(client);
    b.acquire();
    b.release();

    assertThat(zk.requestsSoFar(client) - before).as("still kept: in memory").isZero();
    assertThat(children(client, path)).containsExactly(kept);
    b.close();
    await("given back by the last close").until(() -> children(client, path).isEmpty());
  }

  // ---- a held place ----

  @Test
  void closingWhileHeld_leavesTheHoldAlone_andItsReleaseGivesThePlaceBack() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = lingering(client, path);
    lock.acquire();
    long token = lock.fencingToken();

    lock.close();
    lock.checkHeld();
    lock.acquire(); // the holder may acquire again: no new hold
    assertThat(lock.getHoldCount()).isEqualTo(2);
    assertThat(lock.fencingToken()).isEqualTo(token);
    assertThat(children(client, path)).hasSize(1);
    lock.release();
    lock.release();

    await("given back at the release, not kept").until(() -> children(client, path).isEmpty());
  }

  @Test
  void closingWhileALocalThreadWaits_withdrawsIt_andTheLastReleaseGivesThePlaceBack()
      throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    NonReentrantMutex lock = NonReentrantMutex.builder(client, path).linger(LONG).build();
    lock.acquire();
    CompletableFuture<LockHold> waiter = lock.acquireAsync().toCompletableFuture();
    await("the waiter joined").until(() -> !waiter.isDone() && lock.isAcquiredInThisProcess());

    lock.close();
    assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS))
        .as("the close withdrew the waiter")
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(IllegalStateException.class);
    lock.checkHeld();
    assertThat(children(client, path)).as("the holder's place").hasSize(1);
    lock.release();

    await("given back at the last release, not kept").until(() -> children(client, path).isEmpty());
  }

  // ---- a closed lock object ----

  enum Kind {
    REENTRANT_LINGERING,
    REENTRANT_PLAIN,
    NON_REENTRANT_LINGERING,
    NON_REENTRANT_PLAIN
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aClosedLockObject_refusesEveryNewHold_andSendsNothing(Kind kind) throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    FencedLock lock = build(kind, client, path);
    lock.acquire();
    lock.release();
    close(lock);
    await("nothing kept").until(() -> children(client, path).isEmpty());
    long before = zk.requestsSoFar(client);

    List<ThrowingCall> calls = new ArrayList<>();
    calls.add(lock::acquire);
    calls.add(() -> lock.acquire(1, TimeUnit.SECONDS));
    calls.add(lock::hold);
    calls.add(() -> lock.tryHold(Duration.ofSeconds(1)));
    calls.add(lock::acquireAsync);
    calls.add(() -> lock.asLock().lock());
    calls.add(() -> lock.asLock().tryLock());
    for (ThrowingCall call : calls) {
      assertThatThrownBy(call::run)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("is closed")
          .hasMessageContaining(path);
    }
    close(lock); // idempotent

    assertThat(zk.requestsSoFar(client) - before).as("nothing sent").isZero();
    assertThat(children(client, path)).isEmpty();
  }

  // ---- the client's memory ----

  @Test
  void placesOfClosedLockObjects_areDroppedFromTheClientsMemory_onceIdle() throws Exception {
    CuratorFramework client = zk.newClient();
    new ReentrantMutex(client, zk.path("warm-up")); // the client's shared helpers, made once
    LockEngine engine = LockEngine.of(client);
    int before = engine.sharedCount();
    List<ReentrantMutex> locks = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      ReentrantMutex lock = lingering(client, zk.path("lock-" + i));
      lock.acquire();
      lock.release();
      locks.add(lock);
    }
    assertThat(engine.sharedCount() - before).as("a place per path").isEqualTo(20);

    locks.forEach(ReentrantMutex::close);

    await("every place dropped").until(() -> engine.sharedCount() == before);
    for (int i = 0; i < 20; i++) {
      String path = zk.path("lock-" + i);
      await().until(() -> children(client, path).isEmpty());
    }
  }

  @Test
  void aLockObjectBuiltAfterTheLastClose_takesANewPlace_andLingers() throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex first = lingering(client, path);
    first.acquire();
    first.release();
    first.close();
    await().until(() -> children(client, path).isEmpty());

    ReentrantMutex second = lingering(client, path);
    second.acquire();
    second.release();
    long before = zk.requestsSoFar(client);
    second.acquire();
    second.release();

    assertThat(zk.requestsSoFar(client) - before).as("kept again").isZero();
    second.close();
    await().until(() -> children(client, path).isEmpty());
  }

  // ---- helpers ----

  @FunctionalInterface
  interface ThrowingCall {
    void run() throws Exception;
  }

  private static FencedLock build(Kind kind, CuratorFramework client, String path) {
    return switch (kind) {
      case REENTRANT_LINGERING -> lingering(client, path);
      case REENTRANT_PLAIN -> new ReentrantMutex(client, path);
      case NON_REENTRANT_LINGERING -> NonReentrantMutex.builder(client, path).linger(LONG).build();
      case NON_REENTRANT_PLAIN -> new NonReentrantMutex(client, path);
    };
  }

  private static void close(FencedLock lock) {
    if (lock instanceof ReentrantMutex mutex) {
      mutex.close();
    } else {
      ((NonReentrantMutex) lock).close();
    }
  }

  private static List<String> children(CuratorFramework client, String path) throws Exception {
    try {
      return client.getChildren().forPath(path);
    } catch (KeeperException.NoNodeException containerRemoved) {
      return List.of();
    }
  }
}

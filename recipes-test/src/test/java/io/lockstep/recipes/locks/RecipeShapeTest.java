package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZeroBudgetTry;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One shape for every recipe, on a real server: the builders make what the constructors make, the
 * semaphore answers in Curator's shapes ({@code null} when busy) and in the shared {@code tryHold},
 * and {@code close()} ends an object's use: no new hold, waiting requests of the semaphore
 * withdrawn, holds under way left alone. The extension checks that nothing is left behind.
 */
@Timeout(60)
class RecipeShapeTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @AfterEach
  void noChildWatchLeft() {
    zk.assertNoChildWatchLeft();
  }

  // ---- the semaphore's forms ----

  @Test
  void theSemaphoresCuratorForms_returnNullWhenBusy_andTryHoldReturnsEmpty() throws Exception {
    CuratorFramework client = zk.newClient();
    CountingSemaphore holder = CountingSemaphore.builder(client, zk.path("sem"), 2).build();
    CountingSemaphore other = new CountingSemaphore(zk.newClient(), zk.path("sem"), 2);
    List<LockHold> both = holder.acquire(2);
    try {
      assertThat(both).hasSize(2);
      assertThat(other.acquire(200, TimeUnit.MILLISECONDS)).as("acquire(time, unit)").isNull();
      assertThat(other.acquire(Duration.ZERO)).as("acquire(Duration)").isNull();
      assertThat(other.acquire(1, 200, TimeUnit.MILLISECONDS))
          .as("acquire(qty, time, unit)")
          .isNull();
      assertThat(other.acquire(1, Duration.ofMillis(200))).as("acquire(qty, Duration)").isNull();
      assertThat(other.tryHold(Duration.ofMillis(200))).as("tryHold(Duration)").isEmpty();
      assertThat(other.tryHold(1, Duration.ZERO)).as("tryHold(qty, Duration)").isEmpty();
    } finally {
      both.forEach(LockHold::close);
    }
    try (LockHold one = other.acquire(5, TimeUnit.SECONDS);
        LockHold two = other.hold()) {
      assertThat(one.fencingToken()).isNotEqualTo(two.fencingToken());
      assertThat(other.availablePermits()).isZero();
    }
    List<LockHold> again = other.acquire(2, Duration.ofSeconds(5));
    assertThat(again).hasSize(2);
    again.forEach(LockHold::close);
  }

  @Test
  void aClosedSemaphore_withdrawsItsWaiters_refusesNewRequests_andKeepsTheLeasesHandedOut()
      throws Exception {
    CountingSemaphore semaphore =
        CountingSemaphore.builder(zk.newClient(), zk.path("sem"), 1).build();
    LockHold lease = semaphore.hold();
    CompletableFuture<Object> blocked = inThread(semaphore::acquire);
    CompletableFuture<LockHold> async =
        semaphore.acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
    CuratorFramework admin = zk.newClient();
    await("both wait for the mutex or a lease")
        .until(() -> children(admin, "sem/locks") + children(admin, "sem/leases") >= 3);

    semaphore.close();

    assertThat(blocked.get(10, TimeUnit.SECONDS))
        .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.THROWABLE)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
    assertThatThrownBy(() -> async.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(IllegalStateException.class);
    assertThatThrownBy(semaphore::acquire).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> semaphore.tryHold(Duration.ZERO))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> semaphore.acquireAsync(Duration.ZERO))
        .isInstanceOf(IllegalStateException.class);
    assertThat(lease.state()).as("the lease handed out").isEqualTo(LockState.HELD);
    await("the waiters left nothing").until(() -> children(admin, "sem/locks") == 0);
    assertThat(children(admin, "sem/leases")).as("only the lease handed out").isEqualTo(1);
    lease.close();
    semaphore.close(); // idempotent
  }

  // ---- builders and close of the locks ----

  @Test
  void theReadWriteBuilder_givesTheNodesItsData_andAClosedReadWriteMutexStartsNoHold()
      throws Exception {
    CuratorFramework client = zk.newClient();
    byte[] data = {1, 2, 3};
    ReadWriteMutex lock = ReadWriteMutex.builder(client, zk.path("rw")).lockData(data).build();
    data[0] = 9; // the builder keeps its own copy
    lock.writeLock().acquire();
    String node = client.getChildren().forPath(zk.path("rw")).get(0);
    assertThat(client.getData().forPath(zk.path("rw") + "/" + node)).containsExactly(1, 2, 3);

    lock.close();

    assertThatThrownBy(() -> lock.readLock().acquire(0, TimeUnit.SECONDS))
        .as("a downgrade takes a new node: refused too")
        .isInstanceOf(IllegalStateException.class);
    assertThat(lock.writeLock().acquire(0, TimeUnit.SECONDS))
        .as("the holding thread may still re-enter")
        .isTrue();
    lock.writeLock().release();
    lock.writeLock().release();
    assertThatThrownBy(lock.writeLock()::acquire).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> lock.readLock().tryHold(Duration.ZERO))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void theKeyedLocksBuilder_isTheConstructor_andClosingClosesEveryLockItMade() throws Exception {
    CuratorFramework client = zk.newClient();
    KeyedLocks built =
        KeyedLocks.builder(client, zk.path("keys")).layout(KeyLayout.hashed(2)).build();
    KeyedLocks made = new KeyedLocks(client, zk.path("keys"), KeyLayout.hashed(2));
    assertThat(built.pathOf("orders/17")).isEqualTo(made.pathOf("orders/17"));
    assertThat(KeyedLocks.builder(client, zk.path("keys")).build().layout())
        .isEqualTo(KeyLayout.flat());

    ReentrantMutex orders = built.mutex("orders/17");
    ReadWriteMutex catalog = built.readWrite("catalog");
    built.close();

    assertThatThrownBy(() -> built.mutex("orders/18")).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(orders::acquire).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(catalog.readLock()::acquire).isInstanceOf(IllegalStateException.class);
    ReentrantMutex other = made.mutex("orders/17");
    ZeroBudgetTry.granted(
            "another object on the same keys is not closed",
            () -> other.tryHold(Duration.ZERO),
            Optional::isPresent,
            () -> other.tryHold(Duration.ofSeconds(10)))
        .orElseThrow()
        .close();
  }

  @Test
  void aClosedMultiMutex_startsNoHold_andAComposedOneLeavesItsLocksOpen() throws Exception {
    CuratorFramework client = zk.newClient();
    MultiMutex atomic = new MultiMutex(client, List.of(zk.path("a"), zk.path("b")));
    ReentrantMutex inner = new ReentrantMutex(client, zk.path("c"));
    MultiMutex composed = new MultiMutex(List.of(inner));
    atomic.close();
    composed.close();

    assertThatThrownBy(atomic::acquire).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> atomic.acquireAsync(Duration.ZERO))
        .as("refused at once, as by every closed lock object")
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> composed.acquire(1, TimeUnit.SECONDS))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(composed::hold).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> composed.asLock().tryLock()).isInstanceOf(IllegalStateException.class);
    try (LockHold held = inner.hold()) {
      assertThat(held.state()).as("the composed lock, still open").isEqualTo(LockState.HELD);
    }
  }

  /** A lock object of each kind whose close withdraws its acquires, and how to close it. */
  enum Closable {
    REENTRANT,
    REENTRANT_LOCAL_HANDOFF,
    NON_REENTRANT,
    WRITE_LOCK,
    MULTI_MUTEX;

    /** The lock object on {@code path} (or its paths), and its close. */
    Map.Entry<FencedLock, Runnable> make(CuratorFramework client, String path) {
      switch (this) {
        case REENTRANT -> {
          ReentrantMutex lock = new ReentrantMutex(client, path);
          return Map.entry(lock, lock::close);
        }
        case REENTRANT_LOCAL_HANDOFF -> {
          ReentrantMutex lock = ReentrantMutex.builder(client, path).localHandoff().build();
          return Map.entry(lock, lock::close);
        }
        case NON_REENTRANT -> {
          NonReentrantMutex lock = new NonReentrantMutex(client, path);
          return Map.entry(lock, lock::close);
        }
        case WRITE_LOCK -> {
          ReadWriteMutex lock = new ReadWriteMutex(client, path);
          return Map.entry(lock.writeLock(), lock::close);
        }
        default -> {
          MultiMutex lock = new MultiMutex(client, List.of(path + "/a", path + "/b"));
          return Map.entry(lock, lock::close);
        }
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Closable.class)
  void aClosedLockObject_withdrawsItsAcquiresUnderWay_andLeavesTheHolderAlone(Closable kind)
      throws Exception {
    String path = zk.path("lock");
    FencedLock holderLock = kind.make(zk.newClient(), path).getKey();
    LockHold held = holderLock.hold();
    CuratorFramework admin = zk.newClient();
    int holderNodes = nodes(admin, path);
    Map.Entry<FencedLock, Runnable> waiting = kind.make(zk.newClient(), path);
    FencedLock lock = waiting.getKey();
    CompletableFuture<Object> blocked =
        inThread(
            () -> {
              lock.acquire();
              return "acquired";
            });
    CompletableFuture<Object> timed = inThread(() -> lock.acquire(30, TimeUnit.SECONDS));
    CompletableFuture<LockHold> async =
        lock.acquireAsync(Duration.ofSeconds(30)).toCompletableFuture();
    await("a waiter queued").until(() -> nodes(admin, path) > holderNodes);

    waiting.getValue().run();

    for (CompletableFuture<Object> call : List.of(blocked, timed)) {
      assertThat(call.get(10, TimeUnit.SECONDS))
          .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.THROWABLE)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("closed");
    }
    assertThatThrownBy(() -> async.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(IllegalStateException.class);
    assertThatThrownBy(lock::acquire).isInstanceOf(IllegalStateException.class);
    await("the waiters left nothing").until(() -> nodes(admin, path) == holderNodes);
    assertThat(held.state()).isEqualTo(LockState.HELD);
    held.close();
  }

  /** Runs {@code call} in a thread of its own; completes with its result or what it threw. */
  private static CompletableFuture<Object> inThread(java.util.concurrent.Callable<?> call) {
    CompletableFuture<Object> result = new CompletableFuture<>();
    Thread thread =
        new Thread(
            () -> {
              try {
                result.complete(call.call());
              } catch (Exception e) {
                result.complete(e);
              }
            });
    thread.setDaemon(true);
    thread.start();
    return result;
  }

  /** Lock nodes under {@code path} and its sub-paths (a multi-lock's). */
  private static int nodes(CuratorFramework client, String path) throws Exception {
    int count = 0;
    for (String child : ZooKeeperExtension.childrenOrNone(client, path)) {
      if (child.startsWith("_c_")) {
        count++;
      } else {
        count += ZooKeeperExtension.childrenOrNone(client, path + "/" + child).size();
      }
    }
    return count;
  }

  @Test
  void everyRecipeObject_closesInTryWithResources() throws Exception {
    CuratorFramework client = zk.newClient();
    try (ReentrantMutex reentrant = ReentrantMutex.builder(client, zk.path("r")).build();
        NonReentrantMutex plain = NonReentrantMutex.builder(client, zk.path("n")).build();
        ReadWriteMutex readWrite = ReadWriteMutex.builder(client, zk.path("rw")).build();
        MultiMutex multi = MultiMutex.builder(client).mutex(zk.path("m")).build();
        KeyedLocks keyed = KeyedLocks.builder(client, zk.path("k")).build();
        CountingSemaphore semaphore = CountingSemaphore.builder(client, zk.path("s"), 1).build()) {
      try (LockHold a = reentrant.hold();
          LockHold b = plain.hold();
          LockHold c = readWrite.writeLock().hold();
          LockHold d = multi.hold();
          LockHold e = keyed.mutex("x").hold();
          LockHold f = semaphore.hold()) {
        assertThat(List.of(a, b, c, d, e, f)).allMatch(hold -> hold.state() == LockState.HELD);
      }
    }
  }

  private static int children(CuratorFramework client, String name) throws Exception {
    return ZooKeeperExtension.childrenOrNone(client, zk.path(name)).size();
  }
}

package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.testing.ZeroBudgetTry;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A composed {@code MultiMutex} is one timed call: it returns within its budget plus one 200 ms
 * grace, however many locks it takes, as a single lock does (docs/failure-semantics.md). Each
 * Lockstep lock takes its turn within the composed budget itself, so a lock whose turn comes after
 * the deadline shares the grace the first late one started rather than getting one of its own.
 *
 * <p>The link adds 70 ms each way, and the lock directories are persistent (as in the benchmarks:
 * the server reaps an empty container directory, and a try that finds it gone takes a round trip
 * more), so one try (the create and the read behind it) takes one round trip of about 150 ms:
 * within the grace, but not twice. With a zero budget the first lock is granted in its grace, and
 * the second's answer would come about 100 ms after the grace ended: the call returns empty, and
 * gives the first back. Before, each lock had a grace of its own: every lock was granted, and the
 * call took a round trip per lock past its budget. On a quick link the same zero budget still gives
 * every lock its one try, and every one is granted. A composed lock inside the composed one shares
 * the same budget and grace.
 */
@Timeout(60)
class ComposedBudgetTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Each way: a round trip of about 150 ms, within the 200 ms grace; two are not. */
  private static final long LATENCY_MILLIS = 70;

  /** Which Lockstep locks the composed form takes, in order. */
  enum Composition {
    /** Three reentrant mutexes: thread-owned holds. */
    MUTEXES(
        (client, root) ->
            List.of(
                new ReentrantMutex(client, root + "/a"),
                new ReentrantMutex(client, root + "/b"),
                new ReentrantMutex(client, root + "/c"))),
    /** A write lock, a non-reentrant mutex (an object-owned hold) and an atomic multi-lock. */
    MIXED(
        (client, root) ->
            List.of(
                new ReadWriteMutex(client, root + "/a").writeLock(),
                new NonReentrantMutex(client, root + "/b"),
                new MultiMutex(client, List.of(root + "/c", root + "/d")))),
    /**
     * A mutex, then a composed lock of one mutex: the inner composed lock takes the outer budget
     * too (before, it started a budget of its own, with a grace of its own, from what was left).
     */
    NESTED(
        (client, root) ->
            List.of(
                new ReentrantMutex(client, root + "/a"),
                new MultiMutex(List.of(new NonReentrantMutex(client, root + "/b")))));

    private final BiFunction<CuratorFramework, String, List<InterProcessLock>> locks;

    Composition(BiFunction<CuratorFramework, String, List<InterProcessLock>> locks) {
      this.locks = locks;
    }

    MultiMutex over(CuratorFramework client, String root) {
      return new MultiMutex(locks.apply(client, root));
    }
  }

  /** How the caller asks, with a zero budget. */
  enum Form {
    ACQUIRE,
    TRY_HOLD,
    ASYNC;

    /** Takes every lock with a zero budget: how to give them back, or null if it ran out. */
    Runnable call(MultiMutex lock) throws Exception {
      switch (this) {
        case ACQUIRE:
          return lock.acquire(0, TimeUnit.MILLISECONDS) ? lock::release : null;
        case TRY_HOLD:
          return lock.tryHold(Duration.ZERO).<Runnable>map(hold -> hold::close).orElse(null);
        default:
          try {
            return lock.acquireAsync(Duration.ZERO).toCompletableFuture().join()::close;
          } catch (CompletionException e) {
            assertThat(e).hasCauseInstanceOf(TimeoutException.class);
            return null;
          }
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Composition.class)
  void aZeroBudget_onASlowLink_sharesOneGrace_andGivesTheFirstLockBack(Composition composition)
      throws Exception {
    for (Form form : Form.values()) {
      TcpProxy proxy = zk.proxy();
      CuratorFramework client =
          zk.newClient(builder -> builder.connectString(proxy.connectString()));
      String root = zk.path(form.name());
      for (String directory : List.of("a", "b", "c", "d")) {
        client.create().creatingParentsIfNeeded().forPath(root + "/" + directory);
      }
      MultiMutex lock = composition.over(client, root);
      proxy.setLatency(LATENCY_MILLIS);

      Runnable giveBack = form.call(lock);

      if (giveBack != null) {
        giveBack.run();
      }
      assertThat(giveBack).as(form + ": the second lock's try ends after the one grace").isNull();
      assertThat(lock.isAcquiredInThisProcess()).isFalse();
      proxy.setLatency(0);
      zk.assertNothingLeft(); // the first lock given back, the second's node deleted
      try (LockHold again = lock.tryHold(Duration.ofSeconds(10)).orElseThrow()) {
        assertThat(lock.isAcquiredInThisProcess()).as(form + ": every lock free").isTrue();
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Composition.class)
  void aZeroBudget_onAQuickLink_stillGivesEveryLockItsTry(Composition composition)
      throws Exception {
    CuratorFramework client = zk.newClient();
    MultiMutex lock = composition.over(client, zk.path("quick"));

    for (Form form : Form.values()) {
      Runnable giveBack =
          ZeroBudgetTry.once(
              form + ": a quick server answered slowly", () -> form.call(lock), Objects::nonNull);
      if (giveBack == null) {
        continue;
      }
      assertThat(lock.isAcquiredInThisProcess()).isTrue();
      giveBack.run();
      assertThat(lock.isAcquiredInThisProcess()).isFalse();
    }
    zk.assertNothingLeft();
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Composition.class)
  void aCuratorLockAmongThem_getsWhatIsLeftOfTheBudget(Composition composition) throws Exception {
    CuratorFramework client = zk.newClient();
    List<InterProcessLock> locks = composition.locks.apply(client, zk.path("mixed"));
    InterProcessLock curator = new InterProcessMutex(client, zk.path("curator"));
    List<InterProcessLock> all = new ArrayList<>(List.of(locks.get(0), curator));
    all.addAll(locks.subList(1, locks.size()));
    MultiMutex lock = new MultiMutex(all);

    // One try with the grace, not a grant whatever the load (a test run in six JVMs on two cores
    // once refused this first try of a new client's zero budget): granted, or refused only once
    // the try had its whole grace; then taken with a real budget.
    if (ZeroBudgetTry.once(
        "a Curator lock among them", () -> lock.acquire(0, TimeUnit.MILLISECONDS), b -> b)) {
      assertThat(curator.isAcquiredInThisProcess()).isTrue();
      lock.release();
    }
    assertThat(lock.acquire(10, TimeUnit.SECONDS)).isTrue();
    assertThat(curator.isAcquiredInThisProcess()).isTrue();
    lock.release();
    assertThat(curator.isAcquiredInThisProcess()).isFalse();
    zk.assertNothingLeft();
    assertThatThrownBy(() -> lock.tryHold(Duration.ZERO))
        .as("holds only when every lock is a FencedLock")
        .isInstanceOf(UnsupportedOperationException.class);
  }
}

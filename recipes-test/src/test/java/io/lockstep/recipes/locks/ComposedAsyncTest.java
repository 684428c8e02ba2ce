package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A composed {@code MultiMutex}'s asynchronous acquire takes one lock after another from the
 * previous one's grant: a lock that cannot start there (closed, or a composed lock that cannot take
 * holds) fails the stage and gives back what was taken, and a cancel that lands while the next lock
 * starts withdraws that lock too. Nothing is left on the server.
 */
@Timeout(60)
class ComposedAsyncTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** The second lock of the composition, closed before the composed lock is asked. */
  enum ClosedSecond {
    /** A non-reentrant mutex, closed. */
    MUTEX((client, path) -> new NonReentrantMutex(client, path)),
    /** A composed lock of one mutex, closed: the composed lock inside shares the outer budget. */
    NESTED((client, path) -> new MultiMutex(List.of(new NonReentrantMutex(client, path))));

    private final BiFunction<CuratorFramework, String, InterProcessLock> make;

    ClosedSecond(BiFunction<CuratorFramework, String, InterProcessLock> make) {
      this.make = make;
    }

    InterProcessLock closed(CuratorFramework client, String path) throws Exception {
      InterProcessLock lock = make.apply(client, path);
      ((AutoCloseable) lock).close();
      return lock;
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(ClosedSecond.class)
  void aLaterLockThatCannotStart_failsTheStage_andGivesBackTheLocksTaken(ClosedSecond second)
      throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex first = new ReentrantMutex(client, zk.path("a"));
    MultiMutex composed = new MultiMutex(List.of(first, second.closed(client, zk.path("b"))));

    CompletableFuture<LockHold> stage =
        composed.acquireAsync(Duration.ofSeconds(10)).toCompletableFuture();

    await().atMost(Duration.ofSeconds(10)).until(stage::isDone);
    assertThat(stage)
        .failsWithin(Duration.ZERO)
        .withThrowableOfType(ExecutionException.class)
        .withCauseInstanceOf(IllegalStateException.class);
    assertThat(first.isAcquiredInThisProcess()).isFalse();
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(ZooKeeperExtension.childrenOrNone(client, zk.path("a")))
                    .as("the first lock's node, given back")
                    .isEmpty());
  }

  @Test
  void aCancelThatLandsWhileTheNextLockStarts_withdrawsThatLockToo() throws Exception {
    AtomicReference<CompletableFuture<LockHold>> outer = new AtomicReference<>();
    AtomicBoolean cancelled = new AtomicBoolean();
    String second = zk.path("b");
    ACLProvider cancelsAtTheSecondLock =
        new ACLProvider() {
          @Override
          public List<ACL> getDefaultAcl() {
            return ZooDefs.Ids.OPEN_ACL_UNSAFE;
          }

          @Override
          public List<ACL> getAclForPath(String path) {
            // Asked for the second lock's node as that lock starts: the caller cancels right then.
            CompletableFuture<LockHold> call = outer.get();
            if (path.startsWith(second + "/")
                && call != null
                && cancelled.compareAndSet(false, true)) {
              call.cancel(true);
            }
            return ZooDefs.Ids.OPEN_ACL_UNSAFE;
          }
        };
    CuratorFramework client = zk.newClient(b -> b.aclProvider(cancelsAtTheSecondLock));
    CuratorFramework otherClient = zk.newClient();
    LockHold otherFirst = new NonReentrantMutex(otherClient, zk.path("a")).hold();
    LockHold otherSecond = new NonReentrantMutex(otherClient, second).hold(); // the second waits
    MultiMutex composed =
        new MultiMutex(
            List.of(
                new ReentrantMutex(client, zk.path("a")), new NonReentrantMutex(client, second)));

    CompletableFuture<LockHold> call = composed.acquireAsync().toCompletableFuture();
    outer.set(call);
    otherFirst.close(); // the first lock is granted, and the second starts

    await().atMost(Duration.ofSeconds(10)).untilTrue(cancelled);
    assertThat(call).isCancelled();
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(ZooKeeperExtension.childrenOrNone(client, second))
                  .as("the other client's node only")
                  .hasSize(1);
              assertThat(ZooKeeperExtension.childrenOrNone(client, zk.path("a")))
                  .as("the first lock, given back")
                  .isEmpty();
            });
    otherSecond.close();
    assertThat(composed.tryHold(Duration.ofSeconds(10)))
        .isPresent()
        .get()
        .satisfies(LockHold::close);
  }
}

package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An attempt that is withdrawn (its budget ran out, or it was interrupted) is gone from the queue
 * by the time the call returns: a caller that reads the queue right after, or gives up and lets
 * another process try, must not find its node still there.
 *
 * <p>The waiter reaches the server over a slightly slow link, and the queue is read over a direct
 * one: a deletion still on its way when the call returns is then seen, where on a fast link it
 * would often land first by luck. The cycle is repeated a few times for the same reason.
 */
@Timeout(180)
class WithdrawnAttemptTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Before the fix, every cycle over the slow link left its node behind: a few are enough. */
  private static final int CYCLES = 5;

  /** Each way, on the waiter's link. */
  private static final long LATENCY_MILLIS = 20;

  /** A client whose link to the server is a little slow. */
  private CuratorFramework slowClient() {
    CuratorFramework client = zk.newClient(b -> b.connectString(zk.proxy().connectString()));
    zk.proxy().setLatency(LATENCY_MILLIS);
    return client;
  }

  // Breach 7: a timed acquire returned false before its node was deleted.
  @ParameterizedTest
  @EnumSource(LockKind.class)
  void timedAcquire_returningFalse_hasAlreadyRemovedItsNodes(LockKind kind) throws Exception {
    CuratorFramework admin = zk.newClient();
    List<String> paths = kind.lockPaths(zk.path("lock"));
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    FencedLock waiter = kind.newLock(slowClient(), zk.path("lock"));
    holder.acquire();
    List<List<String>> holderNodes = children(admin, paths);

    List<String> leftBehind = new ArrayList<>();
    for (int cycle = 0; cycle < CYCLES; cycle++) {
      // Enough to enqueue (create, read, watch: 3 round trips) and wait a little.
      boolean acquired = waiter.acquire(300, TimeUnit.MILLISECONDS);
      List<List<String>> afterReturn = children(admin, paths); // at once: no waiting here

      assertThat(acquired).isFalse();
      if (!afterReturn.equals(holderNodes)) {
        leftBehind.add("cycle " + cycle + ": " + afterReturn);
      }
      await().until(() -> children(admin, paths).equals(holderNodes));
    }

    assertThat(leftBehind)
        .as(
            "%d of %d cycles whose node was still queued when acquire returned false",
            leftBehind.size(), CYCLES)
        .isEmpty();
    holder.release();
  }

  // Breach 7: an interrupted acquire threw before its node was deleted.
  @ParameterizedTest
  @EnumSource(LockKind.class)
  void interruptedAcquire_throwing_hasAlreadyRemovedItsNodes(LockKind kind) throws Exception {
    CuratorFramework admin = zk.newClient();
    List<String> paths = kind.lockPaths(zk.path("lock"));
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    CuratorFramework waiterClient = slowClient();
    long waiterSession = Sessions.id(waiterClient);
    FencedLock waiter = kind.newLock(waiterClient, zk.path("lock"));
    holder.acquire();
    List<List<String>> holderNodes = children(admin, paths);
    int holderCount = holder.getParticipantNodes().size();

    List<String> leftBehind = new ArrayList<>();
    try (LockThread thread = new LockThread("waiter")) {
      for (int cycle = 0; cycle < CYCLES; cycle++) {
        CompletableFuture<List<List<String>>> afterThrow =
            thread.call(
                () -> {
                  try {
                    waiter.acquire();
                    return null; // granted: the holder still holds, so this is a failure below
                  } catch (InterruptedException e) {
                    return children(admin, paths); // at once, in the thread that was interrupted
                  }
                });
        // Waiting for certain: enqueued, and watching the node ahead (so its create was answered).
        await()
            .until(
                () ->
                    holder.getParticipantNodes().size() == 2 * holderCount
                        && !zk.stats().watchedPaths(waiterSession).isEmpty());

        thread.thread().interrupt();

        List<List<String>> seen = afterThrow.get(10, TimeUnit.SECONDS);
        assertThat(seen).as("acquire threw InterruptedException").isNotNull();
        if (!seen.equals(holderNodes)) {
          leftBehind.add("cycle " + cycle + ": " + seen);
        }
        await()
            .until(
                () ->
                    children(admin, paths).equals(holderNodes)
                        && zk.stats().watchedPaths(waiterSession).isEmpty());
      }
    }

    assertThat(leftBehind)
        .as(
            "%d of %d cycles whose node was still queued when acquire threw",
            leftBehind.size(), CYCLES)
        .isEmpty();
    holder.release();
  }

  private static List<List<String>> children(CuratorFramework admin, List<String> paths)
      throws Exception {
    List<List<String>> all = new ArrayList<>();
    for (String path : paths) {
      List<String> children = new ArrayList<>(admin.getChildren().forPath(path));
      children.sort(null);
      all.add(children);
    }
    return all;
  }
}

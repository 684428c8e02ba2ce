package io.lockstep.recipes.locks.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The server goes away and comes back within the session timeout: the session survives. */
@Timeout(90)
class ServerRestartTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void serverRestart_holderIsAtRiskThenHeldAgain_andWaiterStillGetsTheLock(MutexKind kind)
      throws Exception {
    FencedLock holder = kind.newLock(zk.newClient(), zk.path("lock"));
    FencedLock waiter = kind.newLock(zk.newClient(), zk.path("lock"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    holder.getStateListenable().addListener(change -> states.add(change.state()));
    holder.acquire();
    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Void> waiting = thread.run(waiter::acquire);
      await().until(() -> holder.getParticipantNodes().size() == 2);

      zk.server().stop();
      await().atMost(Duration.ofSeconds(20)).until(() -> states.contains(LockState.AT_RISK));
      zk.server().restart();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> states.equals(List.of(LockState.HELD, LockState.AT_RISK, LockState.HELD)));

      holder.checkHeld();
      assertThat(waiting).isNotDone();
      holder.release();
      waiting.get(20, TimeUnit.SECONDS);
      thread.run(waiter::release).get(10, TimeUnit.SECONDS);
    }
  }

  /**
   * Waiters of the holder's own client wait through the restart beside another client's: under
   * local handoff in memory, on the holder's node, otherwise each on a node of its own. Once the
   * holder lets go they hold in the order they came, the holder's client's two first, each with a
   * greater token than the hold before (under local handoff: a write of the shared node, made after
   * the restart). The bound of two local handoffs in a row then gives the other client its turn.
   */
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void serverRestart_whileWaitersOfTheHoldersClientWait_theyHoldInTurn_withGreaterTokens(
      MutexKind kind) throws Exception {
    CuratorFramework client = zk.newClient();
    FencedLock holder = kind.newLock(client, zk.path("lock"));
    FencedLock second = kind.newLock(client, zk.path("lock"));
    FencedLock third = kind.newLock(client, zk.path("lock"));
    FencedLock other = kind.newLock(zk.newClient(), zk.path("lock"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    holder.getStateListenable().addListener(change -> states.add(change.state()));
    holder.acquire();
    long holderToken = holder.fencingToken();
    CompletableFuture<LockHold> secondWaiting = second.acquireAsync().toCompletableFuture();
    await().until(() -> holder.getParticipantNodes().size() == kind.queueLength(1, 2));
    CompletableFuture<LockHold> thirdWaiting = third.acquireAsync().toCompletableFuture();
    await().until(() -> holder.getParticipantNodes().size() == kind.queueLength(1, 3));
    try (LockThread thread = new LockThread("other")) {
      CompletableFuture<Void> otherWaiting = thread.run(other::acquire);
      await().until(() -> holder.getParticipantNodes().size() == kind.queueLength(1, 3) + 1);

      zk.server().stop();
      await().atMost(Duration.ofSeconds(20)).until(() -> states.contains(LockState.AT_RISK));
      zk.server().restart();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> states.equals(List.of(LockState.HELD, LockState.AT_RISK, LockState.HELD)));

      holder.checkHeld();
      assertThat(holder.fencingToken()).isEqualTo(holderToken);
      assertThat(List.of(secondWaiting, thirdWaiting, otherWaiting)).noneMatch(f -> f.isDone());
      holder.release();

      LockHold secondHold = secondWaiting.get(20, TimeUnit.SECONDS);
      assertThat(secondHold.state()).isEqualTo(LockState.HELD);
      long secondToken = secondHold.fencingToken();
      assertThat(secondToken).isGreaterThan(holderToken);
      assertThat(List.of(thirdWaiting, otherWaiting)).noneMatch(f -> f.isDone());
      secondHold.close();

      LockHold thirdHold = thirdWaiting.get(20, TimeUnit.SECONDS);
      assertThat(thirdHold.state()).isEqualTo(LockState.HELD);
      long thirdToken = thirdHold.fencingToken();
      assertThat(thirdToken).isGreaterThan(secondToken);
      assertThat(otherWaiting).isNotDone();
      thirdHold.close();

      otherWaiting.get(20, TimeUnit.SECONDS);
      assertThat(thread.call(other::fencingToken).get(10, TimeUnit.SECONDS))
          .isGreaterThan(thirdToken);
      thread.run(other::release).get(10, TimeUnit.SECONDS);
    }
  }

  /**
   * The server goes away while the holder's client has three more contenders waiting, and every
   * hold is let go as soon as it is granted. Without local handoff nothing moves until the server
   * is back: each waiter waits on its own node. Under local handoff the hold passes on in memory,
   * at risk, and reaches the bound of two handoffs in a row while the server is away, so the read
   * of the queue at the bound fails and the place must go back and be taken again. Either way an
   * outage shorter than the session is one the waiters wait out: none of them fails, each holds
   * (the last once the server is back), and the other client's waiter holds as well.
   */
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#inThisRun")
  void serverAway_whileTheHoldPassesAmongWaitersOfOneClient_noWaiterFails(MutexKind kind)
      throws Exception {
    // a short connection timeout: a plain release waits at most that long for its delete
    CuratorFramework client = zk.newClient(b -> b.connectionTimeoutMs(3_000));
    FencedLock holder = kind.newLock(client, zk.path("lock"));
    List<FencedLock> locks =
        List.of(
            kind.newLock(client, zk.path("lock")),
            kind.newLock(client, zk.path("lock")),
            kind.newLock(client, zk.path("lock")));
    FencedLock other = kind.newLock(zk.newClient(), zk.path("lock"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    holder.getStateListenable().addListener(change -> states.add(change.state()));
    holder.acquire();
    long holderToken = holder.fencingToken();
    List<CompletableFuture<LockHold>> waiting = new ArrayList<>();
    for (FencedLock lock : locks) {
      waiting.add(lock.acquireAsync().toCompletableFuture());
      int queued = waiting.size() + 1;
      await().until(() -> holder.getParticipantNodes().size() == kind.queueLength(1, queued));
    }
    try (LockThread otherThread = new LockThread("other");
        LockThread chain = new LockThread("chain")) {
      CompletableFuture<Long> otherToken =
          otherThread.call(
              () -> {
                other.acquire();
                try {
                  return other.fencingToken();
                } finally {
                  other.release();
                }
              });
      await().until(() -> holder.getParticipantNodes().size() == kind.queueLength(1, 4) + 1);

      zk.server().stop();
      await().atMost(Duration.ofSeconds(20)).until(() -> states.contains(LockState.AT_RISK));
      holder.release();
      CompletableFuture<List<LockState>> held =
          chain.call(
              () -> {
                List<LockState> grantedAs = new ArrayList<>();
                for (CompletableFuture<LockHold> next : waiting) {
                  LockHold hold = next.get(60, TimeUnit.SECONDS);
                  grantedAs.add(hold.state());
                  hold.close();
                }
                return grantedAs;
              });
      await("nobody else holds while the server is away")
          .during(Duration.ofSeconds(12))
          .atMost(Duration.ofSeconds(20))
          .until(() -> !otherToken.isDone());
      zk.server().restart();

      // Under local handoff too, nothing is handed on while the server is away: the waiters hold
      // once the session is back, each HELD.
      assertThat(held.get(60, TimeUnit.SECONDS))
          .as("the states the waiters of the holder's client were granted in")
          .isEqualTo(List.of(LockState.HELD, LockState.HELD, LockState.HELD));
      assertThat(otherToken.get(60, TimeUnit.SECONDS)).isGreaterThan(holderToken);
    }
  }

  /**
   * Under local handoff a release while the server is away hands nothing on in memory (a holder
   * elsewhere may hold once the session ended): the next local contender waits, and holds, HELD,
   * once the session is back, on the same node, ahead of the other client's waiter; its token is
   * greater than its predecessor's. (Before, it was handed the hold at once, at risk.)
   */
  @ParameterizedTest
  @MethodSource("io.lockstep.recipes.locks.faults.MutexKind#localInThisRun")
  void aReleaseWhileTheServerIsAway_handsNothingOn_theNextLocalHolderHoldsOnceTheSessionIsBack(
      MutexKind kind) throws Exception {
    CuratorFramework client = zk.newClient();
    FencedLock holder = kind.newLock(client, zk.path("lock"));
    FencedLock next = kind.newLock(client, zk.path("lock"));
    FencedLock other = kind.newLock(zk.newClient(), zk.path("lock"));
    List<LockState> holderStates = new CopyOnWriteArrayList<>();
    holder.getStateListenable().addListener(change -> holderStates.add(change.state()));
    List<LockState> nextStates = new CopyOnWriteArrayList<>();
    next.getStateListenable().addListener(change -> nextStates.add(change.state()));
    holder.acquire();
    long holderToken = holder.fencingToken();
    CompletableFuture<LockHold> nextWaiting = next.acquireAsync().toCompletableFuture();
    try (LockThread thread = new LockThread("other")) {
      CompletableFuture<Void> otherWaiting = thread.run(other::acquire);
      await().until(() -> holder.getParticipantNodes().size() == 2);

      zk.server().stop();
      await().atMost(Duration.ofSeconds(20)).until(() -> holderStates.contains(LockState.AT_RISK));
      holder.release();
      await("no hold handed on while the server is away")
          .during(Duration.ofSeconds(2))
          .atMost(Duration.ofSeconds(5))
          .until(() -> !nextWaiting.isDone());
      zk.server().restart();

      LockHold nextHold = nextWaiting.get(30, TimeUnit.SECONDS);
      assertThat(nextHold.state()).isEqualTo(LockState.HELD);
      assertThat(nextStates).containsExactly(LockState.HELD);
      long nextToken = nextHold.fencingToken();
      assertThat(nextToken).isGreaterThan(holderToken);
      assertThat(otherWaiting).isNotDone();
      nextHold.close();
      otherWaiting.get(20, TimeUnit.SECONDS);
      assertThat(thread.call(other::fencingToken).get(10, TimeUnit.SECONDS))
          .isGreaterThan(nextToken);
      thread.run(other::release).get(10, TimeUnit.SECONDS);
    }
  }
}

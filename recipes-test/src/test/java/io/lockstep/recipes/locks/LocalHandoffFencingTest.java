package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The promises local handoff must keep like every other lock: tokens that only go up across
 * processes, ownership checks that stop committing when the hold passes on, budgets kept by local
 * waiters, the lock node's data kept, and one attempt per local hold for observers. Each test here
 * is a regression test of a breach found in issue 20.
 */
@Timeout(60)
class LocalHandoffFencingTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** A client whose connection timeout is far longer than any budget below. */
  private CuratorFramework slowToGiveUp() {
    return zk.newClient(builder -> builder.connectionTimeoutMs(8_000));
  }

  // Breach 1: a local holder's token minted after another process queued was above that process's.
  @Test
  void aProcessGrantedAfterALocalHolderFenced_getsAGreaterToken() throws Exception {
    CuratorFramework local = zk.newClient();
    String path = zk.path("lock");
    ReentrantMutex lock = ReentrantMutex.builder(local, path).localHandoff().build();
    ReentrantMutex other = new ReentrantMutex(zk.newClient(), path);

    LockHold first = lock.hold();
    CompletableFuture<LockHold> second = lock.acquireAsync().toCompletableFuture();
    CompletableFuture<LockHold> remote = other.acquireAsync().toCompletableFuture();
    await().until(() -> local.getChildren().forPath(path).size() == 2);

    first.close();
    LockHold secondHold = second.get(10, TimeUnit.SECONDS);
    long localToken = secondHold.fencingToken(); // minted after the other process queued
    secondHold.close();
    LockHold remoteHold = remote.get(10, TimeUnit.SECONDS);

    assertThat(remoteHold.fencingToken())
        .as("the other process, granted after the local holder, outranks its token")
        .isGreaterThan(localToken);
    remoteHold.close();
  }

  // Breach 2: an earlier local holder's checks kept committing after the hold passed on.
  @Test
  void anEarlierLocalHoldersChecks_stopCommitting_whenTheHoldPassesOn() throws Exception {
    CuratorFramework client = zk.newClient();
    String data = zk.path("data");
    client.create().creatingParentsIfNeeded().forPath(data, new byte[0]);
    ReentrantMutex lock = ReentrantMutex.builder(client, zk.path("lock")).localHandoff().build();

    LockHold first = lock.hold();
    List<CuratorOp> staleChecks = first.ownershipChecks();
    CompletableFuture<LockHold> waiting = lock.acquireAsync().toCompletableFuture();
    first.close();
    LockHold second = waiting.get(10, TimeUnit.SECONDS); // asks for neither token nor checks

    assertThatThrownBy(() -> write(client, staleChecks, data, "stale"))
        .as("the first holder's checks, after the hold passed on")
        .isInstanceOf(KeeperException.BadVersionException.class);
    write(client, second.ownershipChecks(), data, "fresh");
    assertThat(new String(client.getData().forPath(data), StandardCharsets.UTF_8))
        .isEqualTo("fresh");
    second.close();
  }

  // Breach 3: timed acquires of a local waiter ran for the connection timeout.
  @Test
  void aLocalWaitersTimedAcquire_keepsItsBudget_whileALocalThreadHolds() throws Exception {
    CuratorFramework client = slowToGiveUp();
    ReentrantMutex lock = ReentrantMutex.builder(client, zk.path("lock")).localHandoff().build();
    LockHold held = lock.hold();
    List<Long> elapsed = new CopyOnWriteArrayList<>();

    Thread other =
        new Thread(
            () -> {
              try {
                elapsed.add(
                    timed(() -> assertThat(lock.acquire(300, TimeUnit.MILLISECONDS)).isFalse()));
                elapsed.add(timed(() -> assertThat(lock.acquire(0, TimeUnit.SECONDS)).isFalse()));
                elapsed.add(timed(() -> assertThat(lock.asLock().tryLock()).isFalse()));
                elapsed.add(
                    timed(() -> assertThat(lock.tryHold(Duration.ofMillis(300))).isEmpty()));
              } catch (Exception e) {
                throw new AssertionError(e);
              }
            });
    other.start();
    other.join(30_000);
    CompletableFuture<LockHold> async =
        lock.acquireAsync(Duration.ofMillis(300)).toCompletableFuture();
    long start = System.nanoTime();
    assertThatThrownBy(() -> async.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(TimeoutException.class);
    elapsed.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));

    assertThat(elapsed)
        .as("each within its budget, far from the 8 s connection timeout")
        .hasSize(5)
        .allMatch(millis -> millis < 4_000);
    assertThat(lock.getParticipantNodes()).as("only the holder's place").hasSize(1);
    held.close();
  }

  // Breach 3: the zero-budget forms left the place's node behind when another process held.
  @Test
  void zeroBudgetForms_returnPromptly_andLeaveNoNode_whileAnotherProcessHolds() throws Exception {
    CuratorFramework client = slowToGiveUp();
    String path = zk.path("lock");
    ReentrantMutex lock = ReentrantMutex.builder(client, path).localHandoff().build();
    NonReentrantMutex nonReentrant = NonReentrantMutex.builder(client, path).localHandoff().build();
    ReentrantMutex other = new ReentrantMutex(zk.newClient(), path);
    other.acquire();
    try {
      List<Long> elapsed = new ArrayList<>();
      elapsed.add(timed(() -> assertThat(lock.acquire(0, TimeUnit.SECONDS)).isFalse()));
      assertThat(lock.getParticipantNodes()).as("left behind by acquire(0)").hasSize(1);
      elapsed.add(timed(() -> assertThat(lock.asLock().tryLock()).isFalse()));
      assertThat(lock.getParticipantNodes()).as("left behind by tryLock()").hasSize(1);
      elapsed.add(timed(() -> assertThat(nonReentrant.tryHold(Duration.ZERO)).isEmpty()));
      assertThat(lock.getParticipantNodes()).as("left behind by tryHold(0)").hasSize(1);
      elapsed.add(timed(() -> assertThat(lock.acquire(300, TimeUnit.MILLISECONDS)).isFalse()));
      assertThat(lock.getParticipantNodes()).as("left behind by acquire(300 ms)").hasSize(1);
      assertThat(elapsed).allMatch(millis -> millis < 4_000);
    } finally {
      other.release();
    }
  }

  // Breach 4: the fence write replaced the node's data (the client's default: its address).
  @Test
  void aLocalHoldersFence_keepsTheNodesData() throws Exception {
    byte[] address = "10.0.0.7".getBytes(StandardCharsets.UTF_8);
    CuratorFramework client = zk.newClient(builder -> builder.defaultData(address));
    String path = zk.path("lock");
    ReentrantMutex lock = ReentrantMutex.builder(client, path).localHandoff().build();

    LockHold first = lock.hold();
    long firstToken = first.fencingToken();
    CompletableFuture<LockHold> waiting = lock.acquireAsync().toCompletableFuture();
    first.close();
    LockHold second = waiting.get(10, TimeUnit.SECONDS);
    assertThat(second.fencingToken()).isGreaterThan(firstToken); // the second holder fences

    String node = path + "/" + client.getChildren().forPath(path).get(0);
    assertThat(client.getData().forPath(node)).as("the node's data").isEqualTo(address);
    second.close();
  }

  // Breach 5: observers of the client saw the place's own attempt beside the local holds.
  @Test
  void clientObservers_seeOneAttemptPerLocalHold() throws Exception {
    CuratorFramework client = zk.newClient();
    List<LockAttempt> started = new CopyOnWriteArrayList<>();
    List<AcquireOutcome> ended = new CopyOnWriteArrayList<>();
    LockObservers.of(client)
        .addListener(
            new LockObserver() {
              @Override
              public void attemptStarted(LockAttempt attempt) {
                started.add(attempt);
              }

              @Override
              public void attemptEnded(
                  LockAttempt attempt, AcquireOutcome outcome, Duration waited, long token) {
                ended.add(outcome);
              }
            });
    ReentrantMutex lock = ReentrantMutex.builder(client, zk.path("lock")).localHandoff().build();

    LockHold first = lock.hold();
    CompletableFuture<LockHold> second = lock.acquireAsync().toCompletableFuture();
    first.close();
    second.get(10, TimeUnit.SECONDS).close();
    lock.hold().close();

    await().until(() -> ended.size() >= 3);
    assertThat(started).extracting(LockAttempt::recipe).containsOnly("ReentrantMutex").hasSize(3);
    assertThat(ended).containsOnly(AcquireOutcome.GRANTED).hasSize(3);
  }

  private static void write(
      CuratorFramework client, List<CuratorOp> checks, String path, String value) throws Exception {
    List<CuratorOp> ops = new ArrayList<>(checks);
    ops.add(client.transactionOp().setData().forPath(path, value.getBytes(StandardCharsets.UTF_8)));
    client.transaction().forOperations(ops);
  }

  private interface Body {
    void run() throws Exception;
  }

  /** Milliseconds {@code body} took. */
  private static long timed(Body body) throws Exception {
    long start = System.nanoTime();
    body.run();
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
  }
}

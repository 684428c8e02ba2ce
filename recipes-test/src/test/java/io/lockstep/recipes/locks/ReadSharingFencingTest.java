package io.lockstep.recipes.locks;

import static io.lockstep.recipes.locks.ReadSharingTest.joined;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Fencing under read sharing (issue 37): readers granted with the shared node's grant share its
 * token at no cost; a reader that joined later gets, when it first asks, a node of its own tied to
 * the shared one and that node's token, above every token handed out before; each reader's
 * ownership checks stop committing when it lets go, though other local readers still hold the
 * shared node.
 */
@Timeout(60)
class ReadSharingFencingTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  // Point 5: readers granted together with the node's grant get the grant's token, for free.
  @Test
  void readersGrantedWithTheNode_getItsGrantToken_atNoCost() throws Exception {
    CuratorFramework client = zk.newClient();
    ReadWriteMutex lock = sharing(client);
    LockHold remoteWrite = new ReadWriteMutex(zk.newClient(), path()).writeLock().hold();
    long writerToken = remoteWrite.fencingToken();
    CompletableFuture<LockHold> first = lock.readLock().acquireAsync().toCompletableFuture();
    CompletableFuture<LockHold> second = lock.readLock().acquireAsync().toCompletableFuture();
    zk.requestsSoFar(client); // both readers' requests, if any, have arrived
    remoteWrite.close();
    LockHold firstHold = first.get(10, TimeUnit.SECONDS);
    LockHold secondHold = second.get(10, TimeUnit.SECONDS);
    // Granted behind a writer, by a read that left no child watch, the hold watches its own node
    // once it has lasted its grace (100 ms, on the client's timers): a request of its own, not the
    // token's, counted before. Left to requestsSoFar's quiet period, it could come just after.
    String node = path() + "/" + readNodes(client).get(0);
    await().until(() -> !zk.stats().watchesByPath().getOrDefault(node, List.of()).isEmpty());
    long before = zk.requestsSoFar(client);

    long firstToken = firstHold.fencingToken();
    long secondToken = secondHold.fencingToken();

    assertThat(zk.requestsSoFar(client) - before).as("the grant's token costs nothing").isZero();
    assertThat(firstToken).isEqualTo(secondToken).isGreaterThan(writerToken);
    assertThat(readNodes(client)).as("both on one node").hasSize(1);
    firstHold.close();
    secondHold.close();
  }

  // Point 5: a reader that joined later pays a tied node for a token above every earlier grant.
  @Test
  void aReaderThatJoinedLater_getsATokenAboveAnotherProcesssLaterGrant_fromANodeOfItsOwn()
      throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework observer = zk.newClient();
    ReadWriteMutex lock = sharing(client);
    LockHold first = lock.readLock().hold();
    long firstToken = first.fencingToken();
    String shared = readNodes(observer).get(0);
    LockHold otherProcess = new ReadWriteMutex(zk.newClient(), path()).readLock().hold();
    long otherToken = otherProcess.fencingToken();
    assertThat(otherToken).as("granted after our node").isGreaterThan(firstToken);
    LockHold joinedHold = joined(lock);
    assertThat(readNodes(observer)).as("joined without a node of its own").hasSize(2);
    // The first reader's read left a child watch, which the other process's node fired: the hold
    // then watches its own (the shared) node once it has lasted its grace (100 ms, on the client's
    // timers), a request of its own, not the token's. Left to requestsSoFar's quiet period, it
    // could come after the count began, in any window below.
    String sharedPath = path() + "/" + shared;
    long session = Sessions.id(client);
    await().until(() -> zk.stats().watchedPaths(session).contains(sharedPath));

    long before = zk.requestsSoFar(client);
    long joinedToken = joinedHold.fencingToken();
    assertThat(zk.requestsSoFar(client) - before)
        .as("a create of its own node, tied to the shared one, and a read")
        .isEqualTo(2);
    assertThat(joinedToken).as("above every token before it asked").isGreaterThan(otherToken);
    List<String> ours = ours(observer, client);
    assertThat(ours).as("the shared node and the joined reader's own").hasSize(2).contains(shared);
    before = zk.requestsSoFar(client);
    assertThat(joinedHold.fencingToken()).as("asked again").isEqualTo(joinedToken);
    assertThat(first.fencingToken()).isEqualTo(firstToken);
    assertThat(zk.requestsSoFar(client) - before).as("asked again: nothing sent").isZero();

    joinedHold.close();
    assertThat(zk.requestsSoFar(client) - before).as("its own node's delete").isEqualTo(1);
    assertThat(ours(observer, client)).as("the shared node stays").containsExactly(shared);
    first.close();
    otherProcess.close();
  }

  // Point 5: the thread-bound read lock's token follows the same rule.
  @Test
  void aThreadBoundReaderThatJoinedLater_getsATokenAboveEveryEarlierGrant() throws Exception {
    CuratorFramework client = zk.newClient();
    ReadWriteMutex lock = sharing(client);
    ReadWriteMutex sibling = sharing(client);
    try (LockThread a = new LockThread("reader-a");
        LockThread b = new LockThread("reader-b")) {
      a.run(lock.readLock()::acquire).get(10, TimeUnit.SECONDS);
      long firstToken = a.call(lock.readLock()::fencingToken).get(10, TimeUnit.SECONDS);
      LockHold otherProcess = new ReadWriteMutex(zk.newClient(), path()).readLock().hold();
      long otherToken = otherProcess.fencingToken();
      b.run(sibling.readLock()::acquire).get(10, TimeUnit.SECONDS);
      assertThat(readNodes(client)).as("b joined a's node").hasSize(2);

      long joinedToken = b.call(sibling.readLock()::fencingToken).get(10, TimeUnit.SECONDS);

      assertThat(joinedToken).isGreaterThan(otherToken).isGreaterThan(firstToken);
      assertThat(b.call(sibling.readLock()::fencingToken).get()).isEqualTo(joinedToken);
      b.run(sibling.readLock()::release).get(10, TimeUnit.SECONDS);
      a.run(lock.readLock()::release).get(10, TimeUnit.SECONDS);
      otherProcess.close();
    }
    assertThat(lock.readLock().getParticipantNodes()).isEmpty();
  }

  // Point 6: each reader's checks commit while it holds and fail once it let go, though other
  // local readers hold the shared node: the first reader's, a later one's, a thread-bound one's.
  @Test
  void eachReadersChecks_failOnceItLetGo_whileOthersStillHoldTheSharedNode() throws Exception {
    CuratorFramework client = zk.newClient();
    client.create().creatingParentsIfNeeded().forPath(zk.path("data"), new byte[0]);
    ReadWriteMutex lock = sharing(client);
    LockHold first = lock.readLock().hold();
    LockHold second = joined(lock);
    assertThat(readNodes(client)).hasSize(1);
    List<CuratorOp> firstChecks = first.ownershipChecks();
    List<CuratorOp> secondChecks = second.ownershipChecks();
    write(client, firstChecks, "first");
    write(client, secondChecks, "second");

    try (LockThread reader = new LockThread("thread-bound reader")) {
      reader.run(lock.readLock()::acquire).get(10, TimeUnit.SECONDS);
      List<CuratorOp> threadChecks =
          reader.call(lock.readLock()::ownershipChecks).get(10, TimeUnit.SECONDS);
      write(client, threadChecks, "thread");
      reader.run(lock.readLock()::release).get(10, TimeUnit.SECONDS);
      assertThatThrownBy(() -> write(client, threadChecks, "stale thread"))
          .as("the thread-bound reader's checks, after its release")
          .isInstanceOf(KeeperException.class);
    }

    first.close();
    assertThatThrownBy(() -> write(client, firstChecks, "stale first"))
        .as("the first reader's checks, after it let go, while the second holds the node")
        .isInstanceOf(KeeperException.class);
    write(client, secondChecks, "second again");
    second.close();
    assertThatThrownBy(() -> write(client, secondChecks, "stale second"))
        .isInstanceOf(KeeperException.class);
    assertThat(new String(client.getData().forPath(zk.path("data")), StandardCharsets.UTF_8))
        .isEqualTo("second again");
  }

  private String path() {
    return zk.path("lock");
  }

  private ReadWriteMutex sharing(CuratorFramework client) {
    return ReadWriteMutex.builder(client, path()).localHandoff().build();
  }

  private List<String> readNodes(CuratorFramework observer) throws Exception {
    return ReadSharingTest.nodes(observer, path(), "__READ__");
  }

  /** The read nodes of {@code client}'s session. */
  private List<String> ours(CuratorFramework observer, CuratorFramework client) throws Exception {
    long session = Sessions.id(client);
    List<String> ours = new ArrayList<>();
    for (String node : readNodes(observer)) {
      var stat = observer.checkExists().forPath(path() + "/" + node);
      if (stat != null && stat.getEphemeralOwner() == session) {
        ours.add(node);
      }
    }
    return ours;
  }

  private void write(CuratorFramework client, List<CuratorOp> checks, String value)
      throws Exception {
    List<CuratorOp> ops = new ArrayList<>(checks);
    ops.add(
        client
            .transactionOp()
            .setData()
            .forPath(zk.path("data"), value.getBytes(StandardCharsets.UTF_8)));
    client.transaction().forOperations(ops);
  }
}

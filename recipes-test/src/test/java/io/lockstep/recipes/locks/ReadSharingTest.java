package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Read sharing ({@code ReadWriteMutex.builder(client, path).localHandoff(n)}, issue 37): the
 * readers of one client share one read node, the first one queueing it and later ones joining in
 * memory while it is granted and the place is open; a writer of the process waiting, or a read at
 * the bound that finds a writer behind, closes it; the node goes with the last local reader. The
 * writers of the process hand off locally, as a mutex's do. Fencing and ownership checks are in
 * {@link ReadSharingFencingTest}, Curator's read-write lock beside it in {@code
 * ReadSharingInteropTest}.
 */
@Timeout(120)
class ReadSharingTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Curator's layout of a read node: {@code _c_<uuid>-__READ__<sequence>}. */
  private static final Pattern READ_NODE =
      Pattern.compile("_c_[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}-__READ__\\d{10}");

  // Point 1: one read place and one write place per client and path.
  @Test
  void lockObjectsOfOneClient_shareOneReadNodeAndOneWriteNode_othersTakeTheirOwn()
      throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework observer = zk.newClient();
    ReadWriteMutex a = sharing(client, 8);
    ReadWriteMutex b = sharing(client, 8);

    LockHold readA = a.readLock().hold();
    LockHold readB = joined(b);
    assertThat(readNodes(observer)).as("one read node for both lock objects").hasSize(1);
    LockHold plainRead = new ReadWriteMutex(client, path()).readLock().hold();
    LockHold otherClientRead = sharing(zk.newClient(), 8).readLock().hold();
    assertThat(readNodes(observer))
        .as("a lock object without localHandoff, and another client, take nodes of their own")
        .hasSize(3);
    for (LockHold hold : List.of(readA, readB, plainRead, otherClientRead)) {
      hold.close();
    }

    LockHold writeA = a.writeLock().hold();
    String writeNode = writeNodes(observer).get(0);
    CompletableFuture<LockHold> writeB = b.writeLock().acquireAsync().toCompletableFuture();
    long before = zk.requestsSoFar(client);
    assertThat(writeNodes(observer)).as("the other object's writer waits in memory").hasSize(1);
    writeA.close();
    LockHold writeBHold = writeB.get(10, TimeUnit.SECONDS);
    assertThat(writeNodes(observer)).as("handed on locally").containsExactly(writeNode);
    writeBHold.close();
    assertThat(zk.requestsSoFar(client) - before)
        .as("a local handoff, then the write node's delete")
        .isEqualTo(1);
    assertThat(a.writeLock().getParticipantNodes()).isEmpty();
  }

  // Point 2: the first reader queues the node, readers arriving while it waits are granted with it.
  @Test
  void readersArrivingWhileTheReadNodeWaits_areGrantedWithIt() throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework observer = zk.newClient();
    ReadWriteMutex lock = sharing(client, 8);
    ReadWriteMutex sibling = sharing(client, 8);
    LockHold remoteWrite = new ReadWriteMutex(zk.newClient(), path()).writeLock().hold();

    CompletableFuture<LockHold> first = lock.readLock().acquireAsync().toCompletableFuture();
    await().until(() -> readNodes(observer).size() == 1);
    String node = readNodes(observer).get(0);
    CompletableFuture<LockHold> second = lock.readLock().acquireAsync().toCompletableFuture();
    CompletableFuture<LockHold> third = sibling.readLock().acquireAsync().toCompletableFuture();
    zk.requestsSoFar(client); // whatever the late readers send has arrived
    assertThat(readNodes(observer))
        .as("the late readers wait with the first")
        .containsExactly(node);
    assertThat(node).matches(READ_NODE);
    remoteWrite.close();

    List<LockHold> holds = new ArrayList<>();
    for (CompletableFuture<LockHold> reader : List.of(first, second, third)) {
      holds.add(reader.get(10, TimeUnit.SECONDS));
    }
    assertThat(readNodes(observer)).as("all three on the first's node").containsExactly(node);
    holds.forEach(LockHold::close);
    assertThat(lock.readLock().getParticipantNodes()).isEmpty();
  }

  // Point 2: readers arriving while the node is granted join in memory, with no request.
  @Test
  void readersArrivingWhileTheReadNodeIsGranted_joinWithoutARequest() throws Exception {
    CuratorFramework client = zk.newClient();
    client.create().creatingParentsIfNeeded().forPath(path()); // persistent: no reaper's requests
    ReadWriteMutex lock = sharing(client, 8);
    ReadWriteMutex sibling = sharing(client, 8);
    LockHold first = lock.readLock().hold();
    long before = zk.requestsSoFar(client);

    List<LockHold> holds = new ArrayList<>(List.of(joined(lock), joined(sibling), joined(lock)));
    try (LockThread reader = new LockThread("thread-bound reader")) {
      reader.run(sibling.readLock()::acquire).get(10, TimeUnit.SECONDS);
      assertThat(zk.requestsSoFar(client) - before)
          .as("four joins below the bound of 8: nothing sent")
          .isZero();
      assertThat(lock.readLock().getParticipantNodes()).hasSize(1);
      before = zk.requestsSoFar(client);
      reader.run(sibling.readLock()::release).get(10, TimeUnit.SECONDS);
    }
    holds.forEach(LockHold::close);
    assertThat(zk.requestsSoFar(client) - before).as("joined readers let go in memory").isZero();
    first.close();
    assertThat(zk.requestsSoFar(client) - before).as("the last one deletes the node").isEqualTo(1);
  }

  // Points 2 and 3: a local writer waiting closes the place; the next node queues behind it.
  @Test
  void aWriterOfThisProcessWaiting_closesThePlace_andALaterReaderQueuesANewNodeBehindIt()
      throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework observer = zk.newClient();
    ReadWriteMutex lock = sharing(client, 8);
    LockHold first = lock.readLock().hold();
    LockHold second = joined(lock);
    String node = readNodes(observer).get(0);
    assertThat(readNodes(observer)).containsExactly(node);

    try (LockThread writer = new LockThread("writer")) {
      CompletableFuture<Void> writing = writer.run(lock.writeLock()::acquire);
      await().until(() -> writeNodes(observer).size() == 1);
      String writeNode = writeNodes(observer).get(0);
      CompletableFuture<LockHold> late = lock.readLock().acquireAsync().toCompletableFuture();

      second.close();
      assertThat(readNodes(observer)).as("still held by the first reader").containsExactly(node);
      assertThat(writing).isNotDone();
      first.close(); // the last holder: the node goes, and the late reader queues a new one
      writing.get(10, TimeUnit.SECONDS);
      await().until(() -> readNodes(observer).size() == 1 && !readNodes(observer).contains(node));
      assertThat(sequence(readNodes(observer).get(0)))
          .as("the late reader's node, behind the writer")
          .isGreaterThan(sequence(writeNode));
      assertThat(late).isNotDone();
      writer.run(lock.writeLock()::release).get(10, TimeUnit.SECONDS);
      late.get(10, TimeUnit.SECONDS).close();
    }
    assertThat(lock.readLock().getParticipantNodes()).isEmpty();
  }

  // Point 2: the read sent after n joins in a row finds another process's writer and closes it.
  @Test
  void theReadAfterTheBoundOfJoins_findsAnotherProcesssWriter_andClosesThePlace() throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework observer = zk.newClient();
    ReadWriteMutex lock = sharing(client, 2);
    ReadWriteMutex remote = new ReadWriteMutex(zk.newClient(), path());
    LockHold first = lock.readLock().hold();
    String node = readNodes(observer).get(0);
    spendTheChildWatch(client);
    CompletableFuture<LockHold> remoteWrite =
        remote.writeLock().acquireAsync().toCompletableFuture();
    await().until(() -> writeNodes(observer).size() == 1);

    List<LockHold> holds = new ArrayList<>(List.of(first, joined(lock), joined(lock)));
    // the second join reached the bound of 2: its read finds the writer, and this one waits for it
    CompletableFuture<LockHold> late = lock.readLock().acquireAsync().toCompletableFuture();
    holds.forEach(LockHold::close);

    LockHold writeHold = remoteWrite.get(10, TimeUnit.SECONDS); // the late reader did not join
    assertThat(late).isNotDone();
    await().until(() -> readNodes(observer).size() == 1 && !readNodes(observer).contains(node));
    assertThat(sequence(readNodes(observer).get(0)))
        .isGreaterThan(sequence(writeNodes(observer).get(0)));
    writeHold.close();
    late.get(10, TimeUnit.SECONDS).close();
  }

  // Point 2, as above on a place granted behind a writer: its granting read left no child watch,
  // so only the read at the bound can tell it of the next writer.
  @Test
  void theReadAfterTheBoundOfJoins_onAPlaceGrantedBehindAWriter_closesItToTheNextWriter()
      throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework observer = zk.newClient();
    ReadWriteMutex lock = sharing(client, 2);
    ReadWriteMutex remote = new ReadWriteMutex(zk.newClient(), path());
    LockHold firstWrite = remote.writeLock().hold();
    CompletableFuture<LockHold> reading = lock.readLock().acquireAsync().toCompletableFuture();
    await().until(() -> readNodes(observer).size() == 1);
    String node = readNodes(observer).get(0);
    firstWrite.close();
    LockHold first = reading.get(10, TimeUnit.SECONDS);
    CompletableFuture<LockHold> remoteWrite =
        remote.writeLock().acquireAsync().toCompletableFuture();
    await().until(() -> writeNodes(observer).size() == 1);

    List<LockHold> holds = new ArrayList<>(List.of(first, joined(lock), joined(lock)));
    // the second join reached the bound of 2: its read finds the writer; no zero budget joins now
    assertThat(lock.readLock().tryHold(Duration.ZERO)).as("a third join").isEmpty();
    CompletableFuture<LockHold> late = lock.readLock().acquireAsync().toCompletableFuture();
    holds.forEach(LockHold::close);

    LockHold writeHold = remoteWrite.get(10, TimeUnit.SECONDS); // the late reader did not join
    assertThat(late).isNotDone();
    await().until(() -> readNodes(observer).size() == 1 && !readNodes(observer).contains(node));
    assertThat(sequence(readNodes(observer).get(0)))
        .isGreaterThan(sequence(writeNodes(observer).get(0)));
    writeHold.close();
    late.get(10, TimeUnit.SECONDS).close();
  }

  // Point 2: however the process hears of it (the granting read's child watch, or the read at the
  // bound), another process's writer waits for at most the bound's number of joins after it queued.
  @Test
  void anotherProcesssWriter_waitsForAtMostTheBoundOfJoins_afterItQueued() throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework observer = zk.newClient();
    ReadWriteMutex lock = sharing(client, 3);
    ReadWriteMutex remote = new ReadWriteMutex(zk.newClient(), path());
    List<LockHold> holds = new ArrayList<>(List.of(lock.readLock().hold()));
    CompletableFuture<LockHold> remoteWrite =
        remote.writeLock().acquireAsync().toCompletableFuture();
    await().until(() -> writeNodes(observer).size() == 1);

    int joins = 0;
    for (int i = 0; i < 6; i++) {
      Optional<LockHold> hold = lock.readLock().tryHold(Duration.ZERO);
      if (hold.isPresent()) {
        holds.add(hold.get());
        joins++;
      }
    }
    assertThat(joins).as("joins after the writer queued").isLessThanOrEqualTo(3);
    holds.forEach(LockHold::close);
    remoteWrite.get(10, TimeUnit.SECONDS).close();
    assertThat(lock.readLock().getParticipantNodes()).isEmpty();
  }

  // Point 2: readers waiting for a writer of the process share the node they queue.
  @Test
  void readersWaitingForALocalWriter_shareOneNode() throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework observer = zk.newClient();
    ReadWriteMutex lock = sharing(client, 8);
    try (LockThread writer = new LockThread("writer")) {
      writer.run(lock.writeLock()::acquire).get(10, TimeUnit.SECONDS);
      CompletableFuture<LockHold> first = lock.readLock().acquireAsync().toCompletableFuture();
      CompletableFuture<LockHold> second = lock.readLock().acquireAsync().toCompletableFuture();
      writer.run(lock.writeLock()::release).get(10, TimeUnit.SECONDS);

      LockHold firstHold = first.get(10, TimeUnit.SECONDS);
      LockHold secondHold = second.get(10, TimeUnit.SECONDS);
      assertThat(readNodes(observer)).hasSize(1);
      firstHold.close();
      secondHold.close();
    }
    assertThat(lock.readLock().getParticipantNodes()).isEmpty();
  }

  // Point 3: no linger; the node goes with the last local reader, before its release returns.
  @Test
  void theReadNodeGoes_whenTheLastLocalReaderLetsGo_andNotBefore() throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework observer = zk.newClient();
    ReadWriteMutex lock = sharing(client, 8);
    try (LockThread a = new LockThread("reader-a");
        LockThread b = new LockThread("reader-b")) {
      a.run(lock.readLock()::acquire).get(10, TimeUnit.SECONDS);
      b.run(lock.readLock()::acquire).get(10, TimeUnit.SECONDS);
      String node = readNodes(observer).get(0);
      assertThat(readNodes(observer)).containsExactly(node);

      a.run(lock.readLock()::release).get(10, TimeUnit.SECONDS);
      assertThat(readNodes(observer)).as("b still reads on it").containsExactly(node);
      assertThat(b.call(lock.readLock()::isOwnedByCurrentThread).get()).isTrue();
      b.run(lock.readLock()::release).get(10, TimeUnit.SECONDS);
      assertThat(readNodes(observer)).as("gone when the last reader's release returned").isEmpty();
    }
  }

  // Point 4: a downgrade ties a read node to the write node; the write place then goes back
  // through ZooKeeper, not to the next local writer, while the downgraded reader reads.
  @Test
  void downgrade_tiesAReadNodeToTheWriteNode_andTheWritePlaceGoesBackThroughZooKeeper()
      throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework observer = zk.newClient();
    ReadWriteMutex lock = sharing(client, 8);
    ReadWriteMutex sibling = sharing(client, 8);
    try (LockThread downgrader = new LockThread("downgrader");
        LockThread writer = new LockThread("writer")) {
      downgrader.run(lock.writeLock()::acquire).get(10, TimeUnit.SECONDS);
      String writeNode = writeNodes(observer).get(0);
      CompletableFuture<Void> next = writer.run(sibling.writeLock()::acquire);
      zk.requestsSoFar(client); // whatever the next writer sends has arrived
      assertThat(writeNodes(observer)).as("the next writer waits in memory").hasSize(1);

      downgrader.run(lock.readLock()::acquire).get(10, TimeUnit.SECONDS);
      String tie = readNodes(observer).get(0);
      assertThat(sequence(tie)).as("tied to the write node").isEqualTo(sequence(writeNode));
      downgrader.run(lock.writeLock()::release).get(10, TimeUnit.SECONDS);

      await().until(() -> next.isDone() || !writeNodes(observer).contains(writeNode));
      assertThat(next).as("no local handoff while the downgraded reader reads").isNotDone();
      await().until(() -> writeNodes(observer).size() == 1);
      assertThat(sequence(writeNodes(observer).get(0)))
          .as("the next writer queued anew, behind the tied reader")
          .isGreaterThan(sequence(tie));
      assertThat(downgrader.call(lock.readLock()::isOwnedByCurrentThread).get()).isTrue();
      zk.requestsSoFar(client);
      assertThat(next).isNotDone();

      downgrader.run(lock.readLock()::release).get(10, TimeUnit.SECONDS);
      next.get(10, TimeUnit.SECONDS);
      writer.run(sibling.writeLock()::release).get(10, TimeUnit.SECONDS);
    }
    assertThat(lock.readLock().getParticipantNodes()).isEmpty();
  }

  // Point 7: the shared node deleted by someone else loses every local reader on it; a reader
  // waiting at the closed place takes a new one and is granted.
  @Test
  void theSharedNodeDeleted_losesEveryLocalReader_andAWaitingReaderTakesANewNode()
      throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework observer = zk.newClient();
    ReadWriteMutex lock = sharing(client, 8);
    List<LockState> heard = new CopyOnWriteArrayList<>();
    lock.readLock().getStateListenable().addListener(change -> heard.add(change.state()));
    LockHold first = lock.readLock().hold();
    LockHold second = joined(lock);
    try (LockThread reader = new LockThread("thread-bound reader");
        LockThread writer = new LockThread("writer")) {
      reader.run(lock.readLock()::acquire).get(10, TimeUnit.SECONDS);
      String node = readNodes(observer).get(0);
      assertThat(readNodes(observer)).containsExactly(node);
      CompletableFuture<LockOwnershipLostException> firstLost =
          first.whenLost().toCompletableFuture();
      CompletableFuture<Void> writing = writer.run(lock.writeLock()::acquire); // closes the place
      await().until(() -> writeNodes(observer).size() == 1);
      CompletableFuture<LockHold> waiting = lock.readLock().acquireAsync().toCompletableFuture();

      observer.delete().forPath(path() + "/" + node);

      assertThat(firstLost.get(10, TimeUnit.SECONDS))
          .isInstanceOf(LockOwnershipLostException.class);
      await().until(() -> second.state() == LockState.LOST);
      assertThat(
              reader
                  .call(
                      () -> {
                        try {
                          lock.readLock().checkHeld();
                          return "held";
                        } catch (LockOwnershipLostException lost) {
                          return "lost";
                        }
                      })
                  .get(10, TimeUnit.SECONDS))
          .isEqualTo("lost");
      await()
          .untilAsserted(
              () ->
                  assertThat(heard.stream().filter(s -> s == LockState.LOST))
                      .as("each of the three readers heard")
                      .hasSize(3));
      writing.get(10, TimeUnit.SECONDS);
      writer.run(lock.writeLock()::release).get(10, TimeUnit.SECONDS);
      LockHold later = waiting.get(10, TimeUnit.SECONDS);
      assertThat(later.state()).isEqualTo(LockState.HELD);
      assertThat(readNodes(observer)).hasSize(1).doesNotContain(node);
      later.close();
      first.close(); // a lost hold is cleared without a throw
      second.close();
      reader.run(lock.readLock()::release).get(10, TimeUnit.SECONDS);
    }
    assertThat(lock.readLock().getParticipantNodes()).isEmpty();
  }

  // Point 7: session expiry loses every local reader; readers that were waiting with the node
  // queue again in the new session and are granted.
  @Test
  void sessionExpiry_losesEveryLocalReader_andWaitingReadersQueueAgain() throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework observer = zk.newClient();
    ReadWriteMutex lock = sharing(client, 8);
    LockHold first = lock.readLock().hold();
    LockHold second = joined(lock);
    assertThat(readNodes(observer)).hasSize(1);

    Sessions.expire(client, zk.server().getConnectString());

    await().until(() -> first.state() == LockState.LOST && second.state() == LockState.LOST);
    first.close();
    second.close();
    LockHold remoteWrite = new ReadWriteMutex(zk.newClient(), path()).writeLock().hold();
    CompletableFuture<LockHold> waitingA = lock.readLock().acquireAsync().toCompletableFuture();
    CompletableFuture<LockHold> waitingB = lock.readLock().acquireAsync().toCompletableFuture();
    await().until(() -> readNodes(observer).size() == 1);
    String queued = readNodes(observer).get(0);

    Sessions.expire(client, zk.server().getConnectString());

    await().until(() -> readNodes(observer).size() == 1 && !readNodes(observer).contains(queued));
    assertThat(waitingA).isNotDone();
    remoteWrite.close();
    LockHold a = waitingA.get(30, TimeUnit.SECONDS);
    LockHold b = waitingB.get(30, TimeUnit.SECONDS);
    assertThat(readNodes(observer)).as("one new node for both").hasSize(1);
    a.close();
    b.close();
    zk.assertNothingLeft();
  }

  // Point 10: 8 readers at once cost create + read + delete, and a read per bound of joins.
  @Test
  void eightReadersHoldingAtOnce_costACreateAReadAndADelete_plusAReadPerBoundOfJoins()
      throws Exception {
    long plain = readersAtOnce((client, path) -> new ReadWriteMutex(client, path), "plain");
    long sharing8 = readersAtOnce((client, path) -> sharing(client, path, 8), "bound 8");
    long sharing2 = readersAtOnce((client, path) -> sharing(client, path, 2), "bound 2");

    String counts = "plain " + plain + ", bound 8 " + sharing8 + ", bound 2 " + sharing2;
    assertThat(plain)
        .as("without localHandoff: 3 requests a reader, at least: " + counts)
        .isGreaterThan(23);
    // at most 7 joins: create + getChildren + delete, and one getChildren per bound's joins
    assertThat(sharing8).as("bound 8: " + counts).isBetween(3L, 3L + 1);
    assertThat(sharing2).as("bound 2: " + counts).isBetween(3L, 3L + 4);
  }

  // Point 10: the read at the bound is one getChildren per n joins in a row.
  @Test
  void joinsInARow_costOneReadOfTheQueuePerBound() throws Exception {
    CuratorFramework client = zk.newClient();
    client.create().creatingParentsIfNeeded().forPath(path());
    ReadWriteMutex lock = sharing(client, 2);
    List<LockHold> holds = new ArrayList<>();
    holds.add(lock.readLock().hold());
    long before = zk.requestsSoFar(client);
    for (int i = 0; i < 6; i++) {
      holds.add(joined(lock));
    }
    assertThat(zk.requestsSoFar(client) - before)
        .as("six joins at a bound of 2: a read of the queue per two joins, nothing else")
        .isBetween(2L, 3L);
    assertThat(lock.readLock().getParticipantNodes()).hasSize(1);
    holds.forEach(LockHold::close);
  }

  /** The requests of 8 threads each taking the read lock, all holding at once, then letting go. */
  private long readersAtOnce(
      java.util.function.BiFunction<CuratorFramework, String, ReadWriteMutex> locks, String name)
      throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path(name.replace(' ', '-'));
    client.create().creatingParentsIfNeeded().forPath(path); // persistent: no reaper's requests
    long before = zk.requestsSoFar(client);
    CountDownLatch allHold = new CountDownLatch(8);
    List<LockThread> threads = new ArrayList<>();
    List<CompletableFuture<Void>> done = new ArrayList<>();
    try {
      for (int i = 0; i < 8; i++) {
        ReadWriteMutex lock = locks.apply(client, path);
        LockThread thread = new LockThread(name + "-" + i);
        threads.add(thread);
        done.add(
            thread.run(
                () -> {
                  lock.readLock().acquire();
                  try {
                    allHold.countDown();
                    assertThat(allHold.await(30, TimeUnit.SECONDS)).isTrue();
                  } finally {
                    lock.readLock().release();
                  }
                }));
      }
      for (CompletableFuture<Void> reader : done) {
        reader.get(60, TimeUnit.SECONDS);
      }
    } finally {
      threads.forEach(LockThread::close);
    }
    return zk.requestsSoFar(client) - before;
  }

  private String path() {
    return zk.path("lock");
  }

  private ReadWriteMutex sharing(CuratorFramework client, int bound) {
    return sharing(client, path(), bound);
  }

  /** A read-write lock whose readers share a node, with local handoff bounded by {@code bound}. */
  static ReadWriteMutex sharing(CuratorFramework client, String path, int bound) {
    return ReadWriteMutex.builder(client, path).localHandoff(bound).build();
  }

  /**
   * The child watch left by the read that granted our node fires once, harmlessly: another
   * process's reader comes and goes, and the read of the queue it makes us send finds no writer. A
   * writer that queues after this is found only by the read at the bound of joins.
   */
  private void spendTheChildWatch(CuratorFramework client) throws Exception {
    spendTheChildWatch(zk, client, path());
  }

  /** As above, for the lock at {@code path} of {@code zk}'s server. */
  static void spendTheChildWatch(ZooKeeperExtension zk, CuratorFramework client, String path)
      throws Exception {
    long before = zk.requestsSoFar(client);
    ReadWriteMutex passer = new ReadWriteMutex(zk.newClient(), path);
    passer.readLock().acquire();
    passer.readLock().release();
    await().until(() -> zk.requestsSoFar(client) > before); // that read was answered: no writer
  }

  /** A read hold that joins a granted read node: granted at once, asserted. */
  static LockHold joined(ReadWriteMutex lock) throws InterruptedException {
    Optional<LockHold> hold = lock.readLock().tryHold(Duration.ofSeconds(10));
    assertThat(hold).as("a reader joins the granted read node").isPresent();
    return hold.get();
  }

  private List<String> readNodes(CuratorFramework observer) throws Exception {
    return nodes(observer, path(), "__READ__");
  }

  private List<String> writeNodes(CuratorFramework observer) throws Exception {
    return nodes(observer, path(), "__WRIT__");
  }

  /** The nodes of {@code kind} under {@code path}, in queue order. */
  static List<String> nodes(CuratorFramework observer, String path, String kind) throws Exception {
    return ZooKeeperExtension.childrenOrNone(observer, path).stream()
        .filter(node -> node.contains(kind))
        .sorted(Comparator.comparing(ReadSharingTest::sequence))
        .toList();
  }

  /** A lock node's sequence number, its last ten digits. */
  static String sequence(String node) {
    return node.substring(node.length() - 10);
  }
}

package io.lockstep.recipes.locks.roots;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockInspector;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.ZooKeeperExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every lock recipe for a client whose paths do not start at the server's root: a chroot in its
 * connect string, a Curator namespace, both, or a {@code usingNamespace} facade ({@link
 * ClientRoot}), each test at each root. Each lock is named by a path whose directory and parents do
 * not exist yet; the root client, with neither, checks the nodes at the server's paths. Two clients
 * per root are shared by the tests ({@link RootClients}); after each test no ephemeral node, no
 * data watch and no child watch may be left.
 *
 * <pre>
 * test                                   | recipes
 * granted, seen, excludes, lost on delete | every {@link RootedLock} (multi: no loss on delete)
 * ownership checks, commit then fail      | ReentrantMutex (plain, local handoff), write lock, multi
 * lingering place kept, given back        | ReentrantMutex with linger
 * local handoff in memory, fenced         | NonReentrantMutex with local handoff
 * downgrade tied to the write node        | ReadWriteMutex
 * namespace reaped, made again            | ReentrantMutex (namespaced roots only)
 * issue 32 regression                     | ReentrantMutex, chroot
 * </pre>
 */
@Timeout(30)
class ClientRootsTest {
  @RegisterExtension
  @Order(1)
  static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @RegisterExtension
  @Order(2)
  static final RootClients clients = new RootClients(zk);

  private static final Duration BUDGET = Duration.ofSeconds(10);

  /** Numbers the namespaces of their own that some tests use. */
  private static final AtomicInteger namespaces = new AtomicInteger();

  static Stream<Arguments> everyLockAtEveryRoot() {
    return Arrays.stream(RootedLock.values())
        .flatMap(lock -> Arrays.stream(ClientRoot.values()).map(root -> Arguments.of(lock, root)));
  }

  static Stream<Arguments> checkedLocksAtEveryRoot() {
    List<RootedLock> checked =
        List.of(
            RootedLock.REENTRANT_MUTEX,
            RootedLock.REENTRANT_MUTEX_LOCAL_HANDOFF,
            RootedLock.WRITE_LOCK,
            RootedLock.MULTI_MUTEX);
    return everyLockAtEveryRoot().filter(a -> checked.contains((RootedLock) a.get()[0]));
  }

  // Issue 32, defect 1: a chrooted client's multi (its lock node with the new directory) never
  // answered the acquire: its creates came back without a stat, their paths with the chroot.
  @Test
  void issue32_aChrootedClientsLock_inADirectoryNotMadeYet_isGranted() throws Exception {
    ReentrantMutex lock = new ReentrantMutex(clients.first(ClientRoot.CHROOT), zk.path("lock"));

    assertThat(lock.acquire(10, TimeUnit.SECONDS)).as("granted, not hung").isTrue();
    try {
      assertThat(lock.fencingToken()).isPositive();
      String node = lock.getParticipantNodes().iterator().next();
      assertThat(ZKPaths.getPathAndNode(node).getPath()).isEqualTo(zk.path("lock"));
      assertThat(root().checkExists().forPath(ClientRoot.CHROOT_PATH + node))
          .as("the node, under the chroot")
          .isNotNull();
    } finally {
      lock.release();
    }
  }

  @ParameterizedTest(name = "{0} at {1}")
  @MethodSource("everyLockAtEveryRoot")
  void aLockOnNewDirectories_isGrantedUnderTheRoot_excludesAnotherClient_andIsLostWithItsNode(
      RootedLock recipe, ClientRoot root) throws Exception {
    CuratorFramework client = clients.first(root);
    String name = zk.path("lock");
    List<String> lockPaths = recipe.lockPaths(name);
    FencedLock lock = recipe.lock(client, name);

    assertThat(lock.acquire(10, TimeUnit.SECONDS)).as("granted within the budget").isTrue();
    long token = lock.fencingToken();
    assertThat(token).isPositive();
    List<String> ours = new ArrayList<>();
    for (String lockPath : lockPaths) {
      List<String> nodes = children(root.serverPath(lockPath));
      assertThat(nodes).as("our node at %s", root.serverPath(lockPath)).hasSize(1);
      ours.add(ZKPaths.makePath(lockPath, nodes.get(0)));
    }
    assertThat(lock.getParticipantNodes()).as("in the client's own paths").containsAll(ours);
    assertThat(new LockInspector(client).inspect(lockPaths.get(0)).holders())
        .extracting(LockInspector.Entry::node)
        .containsExactly(ours.get(0));

    FencedLock contender = recipe.contender(clients.second(root), name);
    CompletableFuture<LockHold> waiting = contender.acquireAsync(BUDGET).toCompletableFuture();
    RootClients.soon("the other client queues")
        .until(() -> children(root.serverPath(lockPaths.get(0))).size() == 2);
    assertThat(waiting).as("waits while the first holds").isNotDone();
    lock.release();
    for (String node : ours) {
      assertThat(root().checkExists().forPath(root.serverPath(node)))
          .as("%s, gone on release", root.serverPath(node))
          .isNull();
    }
    LockHold second = waiting.get(10, TimeUnit.SECONDS);
    assertThat(second.fencingToken()).isGreaterThan(token);

    if (recipe.detectsNodeDeletion()) {
      String lockPath = root.serverPath(lockPaths.get(0));
      root().delete().forPath(ZKPaths.makePath(lockPath, children(lockPath).get(0)));
      RootClients.soon("the holder hears its node go")
          .until(() -> second.state() == LockState.LOST);
      assertThatThrownBy(second::checkHeld).isInstanceOf(LockOwnershipLostException.class);
    }
    second.close();
    for (String lockPath : lockPaths) {
      assertThat(children(root.serverPath(lockPath))).as("nothing left").isEmpty();
    }
  }

  @ParameterizedTest(name = "{0} at {1}")
  @MethodSource("checkedLocksAtEveryRoot")
  void ownershipChecks_commitInTheClientsTransactionWhileHeld_andFailOnceTheNodeIsGone(
      RootedLock recipe, ClientRoot root) throws Exception {
    CuratorFramework client = clients.first(root);
    String name = zk.path("lock");
    FencedLock lock = recipe.lock(client, name);
    assertThat(lock.acquire(10, TimeUnit.SECONDS)).isTrue();
    String data = zk.path("data");
    client.create().forPath(data, new byte[0]);
    try {
      List<CuratorOp> checks = lock.ownershipChecks();

      write(client, checks, data, "held");
      assertThat(read(root.serverPath(data))).isEqualTo("held");
      String lockPath = root.serverPath(recipe.lockPaths(name).get(0));
      root().delete().forPath(ZKPaths.makePath(lockPath, children(lockPath).get(0)));

      assertThatThrownBy(() -> write(client, checks, data, "stale"))
          .isInstanceOf(KeeperException.NoNodeException.class);
      assertThat(read(root.serverPath(data))).isEqualTo("held");
      if (recipe.detectsNodeDeletion()) {
        RootClients.soon("the holder hears its node go")
            .pollInSameThread() // the hold is the thread's
            .untilAsserted(
                () ->
                    assertThatThrownBy(lock::ownershipChecks)
                        .isInstanceOf(LockOwnershipLostException.class));
      }
    } finally {
      lock.release();
      client.delete().forPath(data); // else the namespace is never empty again
    }
  }

  @ParameterizedTest
  @EnumSource(ClientRoot.class)
  void aLingeringPlace_isKeptAfterRelease_andGivenBackWhenAnotherClientQueues(ClientRoot root)
      throws Exception {
    String path = zk.path("lock");
    ReentrantMutex lock =
        ReentrantMutex.builder(clients.first(root), path).linger(Duration.ofMinutes(1)).build();
    assertThat(lock.acquire(10, TimeUnit.SECONDS)).isTrue();
    long token = lock.fencingToken();
    assertThat(token).isPositive();
    lock.release();
    List<String> kept = children(root.serverPath(path));
    assertThat(kept).as("the lingering place").hasSize(1);
    assertThat(lock.acquire(10, TimeUnit.SECONDS)).as("held again, from the place").isTrue();
    lock.release();

    ReentrantMutex other = new ReentrantMutex(clients.second(root), path);
    assertThat(other.acquire(10, TimeUnit.SECONDS)).as("the place, given back").isTrue();
    try {
      assertThat(other.fencingToken()).isGreaterThan(token);
      assertThat(children(root.serverPath(path))).hasSize(1).doesNotContainAnyElementsOf(kept);
    } finally {
      other.release();
    }
    assertThat(children(root.serverPath(path))).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(ClientRoot.class)
  void localHandoff_passesTheHoldInMemory_withAGreaterToken_andVersionedChecks(ClientRoot root)
      throws Exception {
    CuratorFramework client = clients.first(root);
    String path = zk.path("lock");
    NonReentrantMutex first = NonReentrantMutex.builder(client, path).localHandoff().build();
    NonReentrantMutex second = NonReentrantMutex.builder(client, path).localHandoff().build();
    LockHold held = first.tryHold(BUDGET).orElseThrow();
    long token = held.fencingToken();
    List<CuratorOp> staleChecks = held.ownershipChecks();
    CompletableFuture<LockHold> waiting = second.acquireAsync(BUDGET).toCompletableFuture();
    List<String> place = children(root.serverPath(path));
    assertThat(place).as("one node for the process").hasSize(1);

    held.close();
    String data = zk.path("data");
    client.create().forPath(data, new byte[0]);
    try (LockHold next = waiting.get(10, TimeUnit.SECONDS)) {
      assertThat(next.fencingToken()).isGreaterThan(token);
      assertThat(children(root.serverPath(path))).as("the same place").isEqualTo(place);
      assertThatThrownBy(() -> write(client, staleChecks, data, "stale"))
          .isInstanceOf(KeeperException.BadVersionException.class);
      write(client, next.ownershipChecks(), data, "fresh");
      assertThat(read(root.serverPath(data))).isEqualTo("fresh");
    } finally {
      client.delete().forPath(data);
    }
    assertThat(children(root.serverPath(path))).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(ClientRoot.class)
  void aDowngrade_tiesTheReadNodeToTheWriteNode_andKeepsAnotherWriterOut(ClientRoot root)
      throws Exception {
    String path = zk.path("lock");
    ReadWriteMutex mutex = new ReadWriteMutex(clients.first(root), path);
    assertThat(mutex.writeLock().acquire(10, TimeUnit.SECONDS)).isTrue();
    long writeToken = mutex.writeLock().fencingToken();
    String writeNode = children(root.serverPath(path)).get(0);

    assertThat(mutex.readLock().acquire(10, TimeUnit.SECONDS)).as("the downgrade").isTrue();
    mutex.writeLock().release();

    List<String> nodes = children(root.serverPath(path));
    assertThat(nodes).singleElement().asString().contains("__READ__");
    assertThat(sequenceOf(nodes.get(0))).as("the tie").isEqualTo(sequenceOf(writeNode));
    assertThat(mutex.readLock().getParticipantNodes())
        .containsExactly(ZKPaths.makePath(path, nodes.get(0)));
    assertThat(mutex.readLock().fencingToken()).isPositive();
    ReadWriteMutex writer = new ReadWriteMutex(clients.second(root), path);
    CompletableFuture<LockHold> waiting =
        writer.writeLock().acquireAsync(BUDGET).toCompletableFuture();
    RootClients.soon("the writer queues").until(() -> children(root.serverPath(path)).size() == 2);
    assertThat(waiting).isNotDone();

    mutex.readLock().release();
    try (LockHold next = waiting.get(10, TimeUnit.SECONDS)) {
      assertThat(next.fencingToken()).isGreaterThan(writeToken);
    }
    assertThat(children(root.serverPath(path))).isEmpty();
  }

  // Curator makes a client's namespace once, its nodes as containers; the server reaps them once
  // the locks under them are gone, and the client's next lock must make them again, as Curator's
  // own mutex does. A namespace of two nodes, both reaped.
  @ParameterizedTest
  @EnumSource(
      value = ClientRoot.class,
      names = {"NAMESPACE", "BOTH", "FACADE"})
  void aNamespaceReapedByTheServer_isMadeAgain_byTheClientsNextLock(ClientRoot root)
      throws Exception {
    String top = "reaped-" + namespaces.incrementAndGet();
    String ns = top + "/service";
    ReentrantMutex lock = new ReentrantMutex(clients.newClient(root, ns), "/a/lock");
    assertThat(lock.acquire(10, TimeUnit.SECONDS)).isTrue();
    lock.release();
    await("the server reaps the lock's directories, then the namespace's nodes")
        .atMost(Duration.ofSeconds(20))
        .until(() -> root().checkExists().forPath(root.serverPath(top, "/")) == null);

    assertThat(lock.acquire(10, TimeUnit.SECONDS)).as("granted again").isTrue();
    try {
      assertThat(lock.fencingToken()).isPositive();
      assertThat(children(root.serverPath(ns, "/a/lock"))).hasSize(1);
    } finally {
      lock.release();
    }
  }

  private static CuratorFramework root() {
    return clients.root();
  }

  private static List<String> children(String serverPath) throws Exception {
    return clients.children(serverPath);
  }

  private static String read(String serverPath) throws Exception {
    return new String(root().getData().forPath(serverPath), StandardCharsets.UTF_8);
  }

  private static String sequenceOf(String node) {
    return node.substring(node.length() - 10);
  }

  private static void write(CuratorFramework client, List<CuratorOp> checks, String path, String v)
      throws Exception {
    List<CuratorOp> ops = new ArrayList<>(checks);
    ops.add(client.transactionOp().setData().forPath(path, v.getBytes(StandardCharsets.UTF_8)));
    client.transaction().forOperations(ops);
  }
}

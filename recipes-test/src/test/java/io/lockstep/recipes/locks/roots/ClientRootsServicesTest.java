package io.lockstep.recipes.locks.roots;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.LeaderLayout;
import io.lockstep.recipes.leader.Leadership;
import io.lockstep.recipes.leader.Participant;
import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockInspector;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.spring.LockstepLock;
import io.lockstep.recipes.spring.LockstepLockRegistry;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The recipes beyond the locks of {@link ClientRootsTest}, for a client with a chroot, a namespace,
 * both, or a namespace facade: the counting semaphore, the leader election in both layouts, the
 * Spring registry's locks and the inspector. Each is named by a path whose parents do not exist
 * yet; the root client checks the nodes at the server's paths; after each test no node and no watch
 * is left.
 */
@Timeout(30)
class ClientRootsServicesTest {
  @RegisterExtension
  @Order(1)
  static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @RegisterExtension
  @Order(2)
  static final RootClients clients = new RootClients(zk);

  private static final Duration BUDGET = Duration.ofSeconds(10);

  static Stream<Arguments> everyLayoutAtEveryRoot() {
    return Arrays.stream(LeaderLayout.values())
        .flatMap(
            layout -> Arrays.stream(ClientRoot.values()).map(root -> Arguments.of(layout, root)));
  }

  @ParameterizedTest
  @EnumSource(ClientRoot.class)
  void aSemaphore_grantsItsLeases_queuesTheNextRequest_andLosesALeaseWithItsNode(ClientRoot root)
      throws Exception {
    String path = zk.path("sem");
    String leases = root.serverPath(path + "/leases");
    CountingSemaphore one = new CountingSemaphore(clients.first(root), path, 2);
    CountingSemaphore two = new CountingSemaphore(clients.second(root), path, 2);

    LockHold a = one.tryHold(BUDGET).orElseThrow();
    LockHold b = two.tryHold(BUDGET).orElseThrow();
    long firstToken = a.fencingToken();
    assertThat(firstToken).isPositive();
    assertThat(b.fencingToken()).isPositive();
    assertThat(clients.children(leases)).hasSize(2);
    assertThat(one.availablePermits()).isZero();
    CompletableFuture<LockHold> waiting = one.acquireAsync(BUDGET).toCompletableFuture();
    LockInspector inspector = new LockInspector(clients.first(root));
    RootClients.soon("the request queues")
        .until(() -> !inspector.inspectSemaphore(path, 2).waiters().isEmpty());
    assertThat(waiting).as("no third lease").isNotDone();

    a.close();
    LockHold c = waiting.get(10, TimeUnit.SECONDS);
    assertThat(c.fencingToken()).isGreaterThan(firstToken);
    assertThat(inspector.inspectSemaphore(path, 2).holders()).hasSize(2);
    List<String> held = new ArrayList<>(clients.children(leases));
    assertThat(held).hasSize(2);
    b.close();
    held.retainAll(clients.children(leases)); // c's node
    clients.root().delete().forPath(ZKPaths.makePath(leases, held.get(0)));
    RootClients.soon("the lease hears its node go").until(() -> c.state() == LockState.LOST);
    assertThatThrownBy(c::checkHeld).isInstanceOf(LockOwnershipLostException.class);
    c.close();
    assertThat(clients.children(leases)).isEmpty();
    assertThat(one.availablePermits()).isEqualTo(2);
  }

  @ParameterizedTest(name = "{0} at {1}")
  @MethodSource("everyLayoutAtEveryRoot")
  void anElection_electsOneLeader_handsOverOnClose_andElectsAgainAfterItsNodeIsDeleted(
      LeaderLayout layout, ClientRoot root) throws Exception {
    String path = zk.path("election");
    String serverPath = root.serverPath(path);
    try (LeaderElection a = election(clients.first(root), path, "a", layout);
        LeaderElection b = election(clients.second(root), path, "b", layout)) {
      a.start();
      long firstEpoch = a.awaitLeadership(BUDGET).orElseThrow().fencingToken();
      assertThat(firstEpoch).isPositive();
      b.start();
      RootClients.soon("b queues").until(() -> clients.children(serverPath).size() == 2);
      assertThat(b.participants())
          .containsExactly(new Participant("a", true), new Participant("b", false));
      assertThat(b.isLeader()).isFalse();
      assertThat(a.isLeader()).isTrue();

      a.close();
      assertThat(clients.children(serverPath)).as("a's node, gone on return").hasSize(1);
      Leadership second = b.awaitLeadership(BUDGET).orElseThrow();
      long secondEpoch = second.fencingToken();
      assertThat(secondEpoch).isGreaterThan(firstEpoch);

      String node = clients.children(serverPath).get(0);
      clients.root().delete().forPath(ZKPaths.makePath(serverPath, node));
      RootClients.soon("b hears its node go").until(() -> second.state() == LockState.LOST);
      RootClients.soon("b queues again, alone, and leads")
          .until(() -> b.leadership().filter(l -> l != second).isPresent());
      assertThat(b.leadership().orElseThrow().fencingToken()).isGreaterThan(secondEpoch);
      assertThat(clients.children(serverPath)).hasSize(1).doesNotContain(node);

      b.close();
      assertThat(clients.children(serverPath)).isEmpty();
    }
  }

  @ParameterizedTest
  @EnumSource(ClientRoot.class)
  void theSpringRegistrysLock_isTakenAtTheKeysPathUnderTheRoot_andExcludesAnotherRegistry(
      ClientRoot root) throws Exception {
    String registryRoot = zk.path("registry");
    LockstepLockRegistry registry = new LockstepLockRegistry(clients.first(root), registryRoot);
    LockstepLock lock = registry.obtain("tenant-7/orders");
    String serverPath = root.serverPath(registry.pathOf("tenant-7/orders"));
    assertThat(registry.pathOf("tenant-7/orders")).isEqualTo(registryRoot + "/tenant-7/orders");

    assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
    long token = lock.fencingToken();
    assertThat(token).isPositive();
    assertThat(clients.children(serverPath)).hasSize(1);
    LockstepLock other =
        new LockstepLockRegistry(clients.second(root), registryRoot).obtain("tenant-7/orders");
    assertThat(other.tryLock()).as("held by the first registry").isFalse();
    lock.unlock();
    assertThat(clients.children(serverPath)).isEmpty();

    assertThat(other.tryLock(10, TimeUnit.SECONDS)).isTrue();
    assertThat(other.fencingToken()).isGreaterThan(token);
    other.unlock();
    assertThat(clients.children(serverPath)).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(ClientRoot.class)
  void theInspector_findsLocksInTheClientsOwnPaths(ClientRoot root) throws Exception {
    CuratorFramework client = clients.first(root);
    String top = ZKPaths.getPathAndNode(zk.path("x")).getPath();
    ReentrantMutex mutex = new ReentrantMutex(client, zk.path("orders/17"));
    CountingSemaphore semaphore = new CountingSemaphore(clients.second(root), zk.path("sem"), 3);
    assertThat(mutex.acquire(10, TimeUnit.SECONDS)).isTrue();
    try (LockHold lease = semaphore.tryHold(BUDGET).orElseThrow()) {
      assertThat(lease.fencingToken()).isPositive();
      LockInspector.Tree tree = new LockInspector(client).inspectTree(top, 100);

      assertThat(tree.complete()).isTrue();
      assertThat(tree.locks())
          .extracting(LockInspector.Snapshot::path)
          .containsExactly(zk.path("orders/17"), zk.path("sem"));
      assertThat(tree.locks().get(0).holders())
          .extracting(LockInspector.Entry::node)
          .containsExactlyElementsOf(mutex.getParticipantNodes());
      assertThat(tree.locks().get(1).holders())
          .extracting(LockInspector.Entry::node)
          .containsExactly(zk.path("sem/leases/" + semaphore.getParticipantNodes().get(0)));
    } finally {
      mutex.release();
    }
  }

  // The inspector skipped every client's "/zookeeper" as ZooKeeper's own tree; under a chroot or
  // a namespace it is a node like any other.
  @ParameterizedTest
  @EnumSource(ClientRoot.class)
  void theInspectorsWalkFromTheRoot_findsALockUnderTheClientsOwnZookeeperNode(ClientRoot root)
      throws Exception {
    String path = "/zookeeper" + zk.path("lock");
    ReentrantMutex lock = new ReentrantMutex(clients.first(root), path);
    assertThat(lock.acquire(10, TimeUnit.SECONDS)).isTrue();
    try {
      assertThat(clients.root().checkExists().forPath(root.serverPath(path))).isNotNull();

      LockInspector.Tree tree = new LockInspector(clients.second(root)).inspectTree("/", 1_000);

      assertThat(tree.locks()).extracting(LockInspector.Snapshot::path).contains(path);
    } finally {
      lock.release();
    }
  }

  private static LeaderElection election(
      CuratorFramework client, String path, String id, LeaderLayout layout) {
    return LeaderElection.builder(client, path).participantId(id).layout(layout).build();
  }
}

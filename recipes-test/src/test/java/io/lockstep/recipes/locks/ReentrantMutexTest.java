package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What only the reentrant mutex does: reentrancy, revocation, drivers, namespaces, ACLs, data. */
@Timeout(60)
class ReentrantMutexTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void reentrantAcquire_costsNoRequest_keepsTheToken_andCountsHolds() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock"));
    lock.acquire();
    long token = lock.fencingToken();
    long before = zk.requestsSoFar(client);
    lock.acquire();
    assertThat(lock.acquire(1, TimeUnit.SECONDS)).isTrue();
    long after = zk.requestsSoFar(client);

    assertThat(after - before).isZero();
    assertThat(lock.getHoldCount()).isEqualTo(3);
    assertThat(lock.fencingToken()).isEqualTo(token);
    lock.release();
    lock.release();
    assertThat(lock.isOwnedByCurrentThread()).isTrue();
    assertThat(lock.getParticipantNodes()).hasSize(1);
    lock.release();
    assertThat(lock.isOwnedByCurrentThread()).isFalse();
    assertThat(lock.getHoldCount()).isZero();
  }

  @Test
  void revocation_byCuratorsRevoker_reachesTheHolder() throws Exception {
    CuratorFramework client = zk.newClient();
    CuratorFramework other = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock"));
    CountDownLatch revoked = new CountDownLatch(1);
    lock.makeRevocable(forLock -> revoked.countDown());
    lock.acquire();

    Revoker.attemptRevoke(other, lock.getParticipantNodes().iterator().next());

    assertThat(revoked.await(10, TimeUnit.SECONDS)).isTrue();
    lock.release();
  }

  @Test
  void revocableCycle_costsOneMoreRequest_asInCurator() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock"));
    lock.makeRevocable(forLock -> {});
    client.create().creatingParentsIfNeeded().forPath(zk.path("lock")); // not reaped between cycles
    long before = zk.requestsSoFar(client);
    lock.acquire();
    lock.release();

    assertThat(zk.requestsSoFar(client) - before).isEqualTo(4);
  }

  @Test
  void userWrittenDriver_admittingTwoHolders_isObeyed() throws Exception {
    LockDriver twoLeases = new TwoLeasesDriver();
    ReentrantMutex first = new ReentrantMutex(zk.newClient(), zk.path("lock"), twoLeases);
    ReentrantMutex second = new ReentrantMutex(zk.newClient(), zk.path("lock"), twoLeases);
    ReentrantMutex third = new ReentrantMutex(zk.newClient(), zk.path("lock"), twoLeases);
    try (LockThread a = new LockThread("a");
        LockThread b = new LockThread("b");
        LockThread c = new LockThread("c")) {
      a.run(first::acquire).get(10, TimeUnit.SECONDS);
      b.run(second::acquire).get(10, TimeUnit.SECONDS);
      CompletableFuture<Void> waiting = c.run(third::acquire);
      await().until(() -> first.getParticipantNodes().size() == 3);
      assertThat(first.getParticipantNodes())
          .allSatisfy(node -> assertThat(node).contains("-lease-"));
      assertThat(waiting).isNotDone();

      a.run(first::release).get(10, TimeUnit.SECONDS);

      waiting.get(10, TimeUnit.SECONDS);
      b.run(second::release).get(10, TimeUnit.SECONDS);
      c.run(third::release).get(10, TimeUnit.SECONDS);
    }
  }

  /** A user's driver: a semaphore of two leases in sequence order. */
  private static final class TwoLeasesDriver implements LockDriver {
    @Override
    public String lockName() {
      return "lease-";
    }

    @Override
    public LockDecision decide(List<String> sortedNodeNames, String ourNodeName) {
      int ours = sortedNodeNames.indexOf(ourNodeName);
      return ours < 2 ? LockDecision.hold() : LockDecision.watch(sortedNodeNames.get(ours - 2));
    }
  }

  @Test
  void namespacedClient_locksUnderItsNamespace_andExcludesTheSamePathWithout() throws Exception {
    CuratorFramework plain = zk.newClient();
    String namespace = zk.path("ns").substring(1);
    ReentrantMutex namespaced =
        new ReentrantMutex(zk.newClient().usingNamespace(namespace), "/lock");
    ReentrantMutex direct = new ReentrantMutex(plain, "/" + namespace + "/lock");

    namespaced.acquire();

    assertThat(namespaced.getParticipantNodes()).singleElement().asString().startsWith("/lock/_c_");
    assertThat(plain.getChildren().forPath("/" + namespace + "/lock")).hasSize(1);
    assertThat(direct.acquire(200, TimeUnit.MILLISECONDS)).isFalse();
    namespaced.release();
    assertThat(direct.acquire(5, TimeUnit.SECONDS)).isTrue();
    direct.release();
  }

  @Test
  void nodesAndMissingParents_getTheClientsAcls_andParentsAreContainers() throws Exception {
    // A mutable list: ZooKeeper asks acl.contains(null), which List.of refuses with an NPE.
    List<ACL> acl =
        java.util.Collections.singletonList(
            new ACL(
                ZooDefs.Perms.READ
                    | ZooDefs.Perms.WRITE
                    | ZooDefs.Perms.CREATE
                    | ZooDefs.Perms.DELETE,
                new Id("world", "anyone")));
    CuratorFramework client = zk.newClient(b -> b.aclProvider(fixedAcl(acl)));
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("parent/lock"));

    lock.acquire();
    String node = lock.getParticipantNodes().iterator().next();

    assertThat(client.getACL().forPath(node)).isEqualTo(acl);
    assertThat(client.getACL().forPath(zk.path("parent/lock"))).isEqualTo(acl);
    lock.release();
    await("the empty lock directory is reaped: it is a container")
        .until(() -> client.checkExists().forPath(zk.path("parent/lock")) == null);
  }

  /**
   * The locks of one client share how they create nodes while it is the same (an idle lock object
   * per key keeps none of its own); an ACLProvider that gives paths different ACLs still has each
   * lock's nodes made with the ACL of its own path, whatever order the locks are taken in.
   */
  @Test
  void locksOfOneClient_withAnAclPerPath_eachCreateWithTheirOwnAcl() throws Exception {
    List<ACL> readable = acl(ZooDefs.Perms.ALL);
    List<ACL> noAdmin = acl(ZooDefs.Perms.ALL & ~ZooDefs.Perms.ADMIN);
    ACLProvider perPath = aclProvider(readable, path -> path.contains("/b/") ? noAdmin : readable);
    CuratorFramework client = zk.newClient(b -> b.aclProvider(perPath));
    ReentrantMutex a = new ReentrantMutex(client, zk.path("a/lock"));
    ReentrantMutex b = new ReentrantMutex(client, zk.path("b/lock"));
    ReentrantMutex alsoA = new ReentrantMutex(client, zk.path("a/other"));

    for (ReentrantMutex lock : List.of(a, b, alsoA, b, a)) {
      lock.acquire();
      String node = lock.getParticipantNodes().iterator().next();
      assertThat(client.getACL().forPath(node))
          .as(node)
          .isEqualTo(node.contains("/b/") ? noAdmin : readable);
      lock.release();
    }
  }

  @Test
  void aPathTheAclProviderGivesNoAcl_failsAlone_andTheClientsOtherLocksStillWork()
      throws Exception {
    List<ACL> open = acl(ZooDefs.Perms.ALL);
    ACLProvider noneForBad = aclProvider(null, path -> path.contains("/bad/") ? null : open);
    CuratorFramework client = zk.newClient(b -> b.aclProvider(noneForBad));
    ReentrantMutex good = new ReentrantMutex(client, zk.path("good/lock"));
    ReentrantMutex bad = new ReentrantMutex(client, zk.path("bad/lock"));
    ReentrantMutex other = new ReentrantMutex(client, zk.path("other/lock"));

    assertThat(good.acquire(10, TimeUnit.SECONDS)).isTrue();
    good.release();
    assertThatThrownBy(() -> bad.acquire(10, TimeUnit.SECONDS)).isInstanceOf(LockException.class);
    assertThat(other.acquire(10, TimeUnit.SECONDS)).as("a later lock of the client").isTrue();
    other.release();
    assertThat(good.acquire(10, TimeUnit.SECONDS)).as("an earlier one").isTrue();
    good.release();
  }

  /** Gives {@code forPath}'s ACL for each path, and {@code byDefault} as the default ACL. */
  private static ACLProvider aclProvider(List<ACL> byDefault, Function<String, List<ACL>> forPath) {
    return new ACLProvider() {
      @Override
      public List<ACL> getDefaultAcl() {
        return byDefault;
      }

      @Override
      public List<ACL> getAclForPath(String path) {
        return forPath.apply(path);
      }
    };
  }

  private static List<ACL> acl(int perms) {
    // A mutable list: ZooKeeper asks acl.contains(null), which List.of refuses with an NPE.
    return java.util.Collections.singletonList(new ACL(perms, new Id("world", "anyone")));
  }

  @Test
  void nodeData_isTheClientsDefaultData() throws Exception {
    byte[] data = "worker-7".getBytes(StandardCharsets.UTF_8);
    CuratorFramework client = zk.newClient(b -> b.defaultData(data));
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock"));

    lock.acquire();

    assertThat(client.getData().forPath(lock.getParticipantNodes().iterator().next()))
        .isEqualTo(data);
    lock.release();
  }

  private static ACLProvider fixedAcl(List<ACL> acl) {
    return new ACLProvider() {
      @Override
      public List<ACL> getDefaultAcl() {
        return acl;
      }

      @Override
      public List<ACL> getAclForPath(String path) {
        return acl;
      }
    };
  }
}

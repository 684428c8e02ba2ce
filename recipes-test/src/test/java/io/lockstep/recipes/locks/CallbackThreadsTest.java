package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Which thread runs each kind of user code, as the table of docs/threads.md says: the caller's own
 * thread, Lockstep's {@code lockstep-N} threads, or the executor given; never ZooKeeper's event
 * thread. HELD is heard before the acquire returns, RELEASED before the release returns.
 */
@Timeout(60)
class CallbackThreadsTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private final ExecutorService workers =
      Executors.newSingleThreadExecutor(task -> new Thread(task, "workers"));

  /** The thread names each callback ran on, by callback. */
  private final Map<String, List<String>> threads = new ConcurrentHashMap<>();

  @AfterEach
  void stopWorkers() {
    workers.shutdownNow();
  }

  private void ran(String callback) {
    threads
        .computeIfAbsent(callback, c -> new CopyOnWriteArrayList<>())
        .add(Thread.currentThread().getName());
  }

  @Test
  void listenersAndObservers_runOnLockstepsThreads_exceptAttemptStarted_inTheAcquiringThread()
      throws Exception {
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    lock.getStateListenable().addListener(change -> ran("listener " + change.state()));
    lock.getStateListenable().addListener(change -> ran("listener with executor"), workers);
    LockObservers.of(lock)
        .addListener(
            new LockObserver() {
              @Override
              public void attemptStarted(LockAttempt attempt) {
                ran("attemptStarted");
              }

              @Override
              public void attemptEnded(
                  LockAttempt attempt, AcquireOutcome outcome, Duration waited, long token) {
                ran("attemptEnded");
              }

              @Override
              public void released(LockAttempt attempt, Duration held, long token) {
                ran("released");
              }
            });

    try (LockThread caller = new LockThread("caller")) {
      caller.run(lock::acquire).get(10, TimeUnit.SECONDS);
      assertThat(threads).as("heard before acquire returned").containsKeys("listener HELD");
      caller.run(lock::release).get(10, TimeUnit.SECONDS);
      assertThat(threads)
          .as("heard before release returned")
          .containsKeys("listener RELEASED", "released");
    }

    assertThat(threads.get("attemptStarted")).containsExactly("caller");
    assertThat(threads.get("attemptEnded")).singleElement().asString().startsWith("lockstep-");
    assertThat(threads.get("released")).singleElement().asString().startsWith("lockstep-");
    assertThat(threads.get("listener HELD")).singleElement().asString().startsWith("lockstep-");
    assertThat(threads.get("listener RELEASED")).singleElement().asString().startsWith("lockstep-");
    await().until(() -> threads.getOrDefault("listener with executor", List.of()).size() == 2);
    assertThat(threads.get("listener with executor")).containsOnly("workers");
  }

  @Test
  void anAsyncAcquiresStage_completesOnLockstepsThreads_orOnTheExecutorGiven() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex holder = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock"));
    holder.acquire();
    CompletableFuture<LockHold> byDefault =
        lock.acquireAsync()
            .thenApply(
                hold -> {
                  ran("dependent stage");
                  return hold;
                })
            .toCompletableFuture();
    CompletableFuture<LockHold> onWorkers =
        lock.acquireAsync(Duration.ofSeconds(30), workers)
            .thenApply(
                hold -> {
                  ran("dependent stage, executor given");
                  return hold;
                })
            .toCompletableFuture();
    await().until(() -> holder.getParticipantNodes().size() == 3);

    holder.release();
    byDefault.get(10, TimeUnit.SECONDS).close();
    onWorkers.get(10, TimeUnit.SECONDS).close();

    assertThat(threads.get("dependent stage")).singleElement().asString().startsWith("lockstep-");
    assertThat(threads.get("dependent stage, executor given")).containsExactly("workers");
  }

  @Test
  void aRevocationListener_runsOnLockstepsThreads() throws Exception {
    CuratorFramework admin = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    lock.makeRevocable(revoked -> ran("revocation"));
    lock.acquire();
    try {
      String node = new LockInspector(admin).inspect(zk.path("lock")).holders().get(0).node();
      Revoker.attemptRevoke(admin, node);
      await().until(() -> threads.containsKey("revocation"));
    } finally {
      lock.release();
    }
    assertThat(threads.get("revocation")).singleElement().asString().startsWith("lockstep-");
  }

  /**
   * The client's ACLProvider is user code too: asked for our nodes at a lock's first create, and
   * for the lock directories and namespace nodes when a create finds them missing, never on
   * ZooKeeper's event thread (that create's failure is heard there). Every recipe, on paths whose
   * directories do not exist yet, several levels deep, under a namespace the server has not seen.
   */
  @Test
  void theClientsAclProvider_isNeverAskedOnZooKeepersEventThread() throws Exception {
    ACLProvider recorded = recordingAcl();
    CuratorFramework client = zk.newClient(b -> b.aclProvider(recorded).namespace("fresh"));
    String root = zk.path("deep/er/still");

    ReentrantMutex mutex = new ReentrantMutex(client, root + "/mutex");
    assertThat(mutex.acquire(10, TimeUnit.SECONDS)).isTrue();
    mutex.release();
    ReentrantMutex handoff =
        ReentrantMutex.builder(client, root + "/handoff").localHandoff().build();
    assertThat(handoff.acquire(10, TimeUnit.SECONDS)).isTrue();
    handoff.release();
    ReadWriteMutex readWrite = new ReadWriteMutex(client, root + "/rw");
    assertThat(readWrite.readLock().acquire(10, TimeUnit.SECONDS)).isTrue();
    readWrite.readLock().release();
    MultiMutex multi = new MultiMutex(client, List.of(root + "/m1/a", root + "/m2/b"));
    assertThat(multi.acquire(10, TimeUnit.SECONDS)).isTrue();
    multi.release();
    ReentrantMutex key = new KeyedLocks(client, root + "/keys").mutex("order-17");
    try (LockHold hold = key.acquireAsync().toCompletableFuture().get(10, TimeUnit.SECONDS)) {
      assertThat(hold.fencingToken()).isPositive();
    }
    try (LockHold lease =
        new CountingSemaphore(client, root + "/semaphore", 2)
            .tryHold(Duration.ofSeconds(10))
            .orElseThrow()) {
      assertThat(lease.fencingToken()).isPositive();
    }
    LeaderElection election = LeaderElection.builder(client, root + "/election").build();
    election.start();
    assertThat(election.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    election.close();
    handoff.close();

    assertThat(threads.get("acl")).isNotEmpty().noneMatch(name -> name.contains("EventThread"));
  }

  /**
   * A request for two leases of a semaphore whose second lease is taken elsewhere: its first fast
   * try is granted, its second finds no lease free, and the request queues for the {@code locks}
   * mutex once it heard that verdict on ZooKeeper's event thread. The ACLProvider asked for the
   * mutex's node is asked elsewhere.
   */
  @Test
  void aSemaphoreRequestForTwoLeases_asksTheAclProviderOffZooKeepersEventThread() throws Exception {
    CountingSemaphore other = new CountingSemaphore(zk.newClient(), zk.path("semaphore"), 2);
    LockHold taken = other.hold();
    CuratorFramework client = zk.newClient(b -> b.aclProvider(recordingAcl()));
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("semaphore"), 2);

    CompletableFuture<List<LockHold>> two =
        CompletableFuture.supplyAsync(() -> leases(semaphore, 2), workers);
    await()
        .until(
            () -> !ZooKeeperExtension.childrenOrNone(client, zk.path("semaphore/locks")).isEmpty());
    taken.close();
    assertThat(two.get(10, TimeUnit.SECONDS)).hasSize(2).allSatisfy(LockHold::close);

    assertThat(asked())
        .as("paths and threads the ACLProvider was asked on")
        .isNotEmpty()
        .noneMatch(CallbackThreadsTest::onEventThread);
  }

  /**
   * A request whose fast try finds no lease free queues for the {@code locks} mutex when it hears
   * that verdict, on ZooKeeper's event thread: the ACLProvider asked for the mutex's node is asked
   * elsewhere.
   */
  @Test
  void aSemaphoresMutexAfterAFailedFastTry_asksTheAclProviderOffZooKeepersEventThread()
      throws Exception {
    LockHold taken =
        new CountingSemaphore(zk.newClient(), zk.path("semaphore"), 1).hold(); // the only lease
    CuratorFramework client = zk.newClient(b -> b.aclProvider(recordingAcl()));
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("semaphore"), 1);

    CompletableFuture<LockHold> lease = semaphore.acquireAsync().toCompletableFuture();
    await()
        .until(
            () -> !ZooKeeperExtension.childrenOrNone(client, zk.path("semaphore/locks")).isEmpty());
    taken.close();
    lease.get(10, TimeUnit.SECONDS).close();

    assertThat(asked())
        .as("paths and threads the ACLProvider was asked on")
        .anyMatch(ask -> ask.contains("/locks/"))
        .noneMatch(CallbackThreadsTest::onEventThread);
  }

  /**
   * Each lease of a request for several is an acquisition of its own: the second one's attempt
   * starts when the first's grant is heard, on ZooKeeper's event thread. Its observers' {@code
   * attemptStarted} runs elsewhere.
   */
  @Test
  void aSemaphoreRequestForSeveralLeases_tellsAttemptStartedOffZooKeepersEventThread()
      throws Exception {
    CuratorFramework client = zk.newClient();
    LockObservers.of(client)
        .addListener(
            new LockObserver() {
              @Override
              public void attemptStarted(LockAttempt attempt) {
                ran("attemptStarted");
              }
            });
    CountingSemaphore semaphore = new CountingSemaphore(client, zk.path("semaphore"), 3);

    List<LockHold> three = new CopyOnWriteArrayList<>();
    try (LockThread caller = new LockThread("caller")) {
      caller.run(() -> three.addAll(leases(semaphore, 3))).get(10, TimeUnit.SECONDS);
    }
    assertThat(three).hasSize(3).allSatisfy(LockHold::close);

    assertThat(threads.get("attemptStarted"))
        .as("threads attemptStarted ran on, one per lease")
        .hasSize(3)
        .startsWith("caller")
        .noneMatch(CallbackThreadsTest::onEventThread);
  }

  private static List<LockHold> leases(CountingSemaphore semaphore, int qty) {
    try {
      return semaphore.tryHold(qty, Duration.ofSeconds(10));
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  /** What the ACLProvider was asked: each path, and the thread it was asked on. */
  private List<String> asked() {
    return threads.getOrDefault("acl path", List.of());
  }

  private static boolean onEventThread(String thread) {
    return thread.contains("EventThread");
  }

  /** An ACLProvider that records the threads it is asked on, as "acl". */
  private ACLProvider recordingAcl() {
    return new ACLProvider() {
      @Override
      public List<ACL> getDefaultAcl() {
        ran("acl");
        return ZooDefs.Ids.OPEN_ACL_UNSAFE;
      }

      @Override
      public List<ACL> getAclForPath(String path) {
        ran("acl");
        threads
            .computeIfAbsent("acl path", c -> new CopyOnWriteArrayList<>())
            .add(path + " on " + Thread.currentThread().getName());
        return ZooDefs.Ids.OPEN_ACL_UNSAFE;
      }
    };
  }
}

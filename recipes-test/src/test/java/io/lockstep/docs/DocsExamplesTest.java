package io.lockstep.docs;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.CountingSemaphore;
import io.lockstep.recipes.locks.LockDecision;
import io.lockstep.recipes.locks.LockDriver;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockInspector;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.MultiMutex;
import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.locks.SemaphoreMutex;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every Java example of the documentation ({@code README.md} and {@code docs/*.md}), run against a
 * real ZooKeeper server: here, and in the other {@code *ExamplesTest} classes of this package.
 *
 * <p>An example is the code between a marker comment naming its page and section ({@code //
 * docs/reentrant-mutex.md: basic use}) and {@code // docs: end}. The page shows exactly that code;
 * {@link #everyJavaBlockOfTheDocs_isAnExampleOfThisTest()} fails when they drift apart, in either
 * direction. The assertions around each example check that it does what the page says.
 *
 * <p>A page shows its examples as a reader can copy them: each names its imports (or an earlier
 * example of the page does), and declares what it uses. In an example here, a comment {@code //
 * import a.b.C;} is shown as that import, and {@code Type name = expression; // docs: ... why} as
 * {@code Type name = ...; // why}: the test supplies what the reader brings. {@link
 * DocsCompileTest} compiles the pages as shown, without this class around them.
 */
@Timeout(60)
class DocsExamplesTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  // ---- README.md ----

  @Test
  void readme_lockGuardsAWriteFencedWithItsToken() throws Exception {
    // README.md: example
    // import io.lockstep.recipes.locks.ReentrantMutex;
    // import org.apache.curator.framework.CuratorFramework;
    // import org.apache.curator.framework.CuratorFrameworkFactory;
    // import org.apache.curator.retry.ExponentialBackoffRetry;
    // import org.slf4j.Logger;
    // import org.slf4j.LoggerFactory;

    String connectString = zk.server().getConnectString(); // docs: ... "zk1:2181,zk2:2181,zk3:2181"
    FencedStore orders = new FencedStore(); // docs: ... your store: see docs/getting-started.md
    Logger log = LoggerFactory.getLogger("orders");

    CuratorFramework client =
        CuratorFrameworkFactory.newClient(connectString, new ExponentialBackoffRetry(1000, 3));
    client.start();

    ReentrantMutex lock = new ReentrantMutex(client, "/locks/orders"); // was: InterProcessMutex
    lock.getStateListenable().addListener(change -> log.info("lock is {}", change.state()));
    lock.acquire();
    try {
      orders.write("order-17", "paid", lock.fencingToken()); // refused if a newer holder wrote
    } finally {
      lock.release();
    }
    // docs: end
    try {
      assertThat(orders.read("order-17")).isEqualTo("paid");
      assertThat(lock.isAcquiredInThisProcess()).isFalse();
      assertThat(lock.getParticipantNodes()).isEmpty();
    } finally {
      client.close();
    }
  }

  // ---- docs/getting-started.md ----

  @Test
  void gettingStarted_firstLock_writesWithItsFencingToken() throws Exception {
    // docs/getting-started.md: connect
    // import org.apache.curator.framework.CuratorFramework;
    // import org.apache.curator.framework.CuratorFrameworkFactory;
    // import org.apache.curator.retry.ExponentialBackoffRetry;

    String connectString = zk.server().getConnectString(); // docs: ... "zk1:2181,zk2:2181,zk3:2181"
    CuratorFramework client =
        CuratorFrameworkFactory.newClient(connectString, new ExponentialBackoffRetry(1000, 3));
    client.start();
    // docs: end
    try {
      // docs/getting-started.md: first lock
      // import io.lockstep.recipes.locks.ReentrantMutex;

      FencedStore store = new FencedStore(); // docs: ... the resource the lock guards, see below
      ReentrantMutex lock = new ReentrantMutex(client, "/locks/daily-report");
      lock.acquire();
      try {
        store.write("daily-report", "published", lock.fencingToken());
      } finally {
        lock.release();
      }
      // docs: end
      assertThat(store.read("daily-report")).isEqualTo("published");
      assertThat(lock.getParticipantNodes()).isEmpty();
    } finally {
      client.close();
    }
  }

  @Test
  void gettingStarted_timedAcquire_givesUpWhileAnotherInstanceHolds() throws Exception {
    CuratorFramework client = zk.newClient();
    FencedStore store = new FencedStore();
    ReentrantMutex otherInstance = new ReentrantMutex(zk.newClient(), "/locks/daily-report");
    otherInstance.acquire();
    ReentrantMutex lock = new ReentrantMutex(client, "/locks/daily-report");
    // docs/getting-started.md: timed acquire
    // import java.time.Duration;
    // import org.slf4j.Logger;
    // import org.slf4j.LoggerFactory;

    Logger log = LoggerFactory.getLogger("reports");
    if (lock.acquire(Duration.ofMillis(200))) {
      try {
        store.write("daily-report", "published", lock.fencingToken());
      } finally {
        lock.release();
      }
    } else {
      log.info("another instance is publishing the report");
    }
    // docs: end
    assertThat(store.read("daily-report")).isNull();
    assertThat(lock.isAcquiredInThisProcess()).isFalse();
    await().until(() -> lock.getParticipantNodes().size() == 1); // our node was withdrawn
    otherInstance.release();
  }

  @Test
  void gettingStarted_stateListener_flagsTroubleUntilReleased() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(client, "/locks/daily-report");
    List<LockState> states = new CopyOnWriteArrayList<>();
    lock.getStateListenable().addListener(change -> states.add(change.state()));
    // docs/getting-started.md: listen
    // import io.lockstep.recipes.locks.LockState;
    // import java.util.concurrent.atomic.AtomicBoolean;

    AtomicBoolean atRisk = new AtomicBoolean(); // while true, pause work that is not fenced
    lock.getStateListenable()
        .addListener(
            change ->
                atRisk.set(
                    change.state() == LockState.AT_RISK || change.state() == LockState.LOST));
    // docs: end
    lock.acquire();
    assertThat(states).containsExactly(LockState.HELD); // heard before acquire returned
    assertThat(atRisk).isFalse();

    Sessions.expire(client, zk.server().getConnectString());

    await().untilTrue(atRisk); // AT_RISK as soon as the connection drops, then LOST
    await().until(() -> states.contains(LockState.LOST));
    assertThatThrownBy(lock::checkHeld).isInstanceOf(LockOwnershipLostException.class);
    assertThat(atRisk).isTrue();
    assertThatThrownBy(lock::acquire)
        .as("a reentrant acquire of a lost hold")
        .isInstanceOf(LockOwnershipLostException.class);
    assertThat(lock.getHoldCount()).isEqualTo(1);
    lock.release();
    assertThat(atRisk).as("RELEASED is heard before release() returns").isFalse();
  }

  /**
   * The timeline of docs/getting-started.md: holder A is paused past its session, B takes the lock
   * and writes, A resumes and writes with its old token, and the store refuses it.
   */
  @Test
  void pausedHolder_resumingAfterItsSessionExpired_isRefusedByTheFencedStore() throws Exception {
    FencedStore store = new FencedStore();
    CuratorFramework clientA = zk.newClient();
    ReentrantMutex lockA = new ReentrantMutex(clientA, "/locks/orders");
    ReentrantMutex lockB = new ReentrantMutex(zk.newClient(), "/locks/orders");
    lockA.acquire();
    long tokenA = lockA.fencingToken(); // A reads its token, then "pauses"

    Sessions.expire(clientA, zk.server().getConnectString()); // the pause outlives A's session
    try (LockThread b = new LockThread("B")) {
      long tokenB =
          b.call(
                  () -> {
                    lockB.acquire();
                    try {
                      store.write("order-17", "shipped", lockB.fencingToken());
                      return lockB.fencingToken();
                    } finally {
                      lockB.release();
                    }
                  })
              .get(20, TimeUnit.SECONDS);
      assertThat(tokenB).isGreaterThan(tokenA);
    }

    assertThatThrownBy(() -> store.write("order-17", "cancelled", tokenA))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("stale");
    assertThat(store.read("order-17")).isEqualTo("shipped");
    lockA.release(); // A finally learns it lost the lock: local state cleared, no exception
  }

  // docs/getting-started.md: a fenced store
  // import java.util.HashMap;
  // import java.util.Map;

  /** Refuses a write fenced with a token older than one it has accepted for the same key. */
  static final class FencedStore {
    private final Map<String, String> values = new HashMap<>(); // guarded by this
    private final Map<String, Long> newestTokens = new HashMap<>(); // guarded by this

    synchronized void write(String key, String value, long fencingToken) {
      long newest = newestTokens.getOrDefault(key, Long.MIN_VALUE);
      if (fencingToken < newest) {
        throw new IllegalStateException(
            "stale holder: token " + fencingToken + " < " + newest + " for " + key);
      }
      newestTokens.put(key, fencingToken);
      values.put(key, value);
    }

    synchronized String read(String key) {
      return values.get(key);
    }
  }

  // docs: end

  private final List<String> rendered = new CopyOnWriteArrayList<>();
  private final List<Boolean> writersKeptOut = new CopyOnWriteArrayList<>();

  /**
   * The read-write examples' "application": records what a reader saw, and whether a writer of
   * another process (Curator's) was kept out meanwhile.
   */
  private void render(String catalog) {
    rendered.add(catalog);
    InterProcessReadWriteLock writer =
        new InterProcessReadWriteLock(zk.newClient(), "/locks/catalog");
    try (LockThread thread = new LockThread("curator-writer")) {
      boolean got = thread.call(() -> writer.writeLock().acquire(200, TimeUnit.MILLISECONDS)).get();
      if (got) {
        thread.run(writer.writeLock()::release).get();
      }
      writersKeptOut.add(!got);
    } catch (InterruptedException | ExecutionException e) {
      throw new IllegalStateException(e);
    }
  }

  // ---- docs/reentrant-mutex.md ----

  @Test
  void reentrantMutex_basicUse_writesWhileHeld_andLeavesNoNode() throws Exception {
    // docs/reentrant-mutex.md: basic use
    // import io.lockstep.recipes.locks.ReentrantMutex;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient(); // docs: ... a started client
    FencedStore store = new FencedStore(); // docs: ... your store, see getting-started.md
    ReentrantMutex lock = new ReentrantMutex(client, "/locks/inventory");
    lock.acquire();
    try {
      long token = lock.fencingToken(); // known since the grant: no extra request
      store.write("sku-42", "41 in stock", token);
    } finally {
      lock.release();
    }
    // docs: end
    assertThat(store.read("sku-42")).isEqualTo("41 in stock");
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  @Test
  void reentrantMutex_nestedAcquire_keepsTheHoldAndItsToken() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(client, "/locks/inventory");
    // docs/reentrant-mutex.md: reentrancy
    lock.acquire();
    long outer = lock.fencingToken();
    lock.acquire(); // the same thread again: no request, the same hold
    long inner = lock.fencingToken(); // == outer
    int holds = lock.getHoldCount(); // 2: release twice
    lock.release();
    lock.release();
    // docs: end
    assertThat(inner).isEqualTo(outer);
    assertThat(holds).isEqualTo(2);
    assertThat(lock.isOwnedByCurrentThread()).isFalse();
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  @Test
  void reentrantMutex_ownershipCheck_letsTheTransactionCommitOnlyWhileHeld() throws Exception {
    CuratorFramework client = zk.newClient();
    client.create().orSetData().creatingParentsIfNeeded().forPath("/inventory/sku-42");
    ReentrantMutex lock = new ReentrantMutex(client, "/locks/inventory");
    // docs/reentrant-mutex.md: ownership check
    byte[] stock = "41".getBytes(UTF_8); // docs: ... the new stock level
    lock.acquire();
    try {
      client
          .transaction()
          .forOperations(
              lock.ownershipCheck(),
              client.transactionOp().setData().forPath("/inventory/sku-42", stock));
    } finally {
      lock.release();
    }
    // docs: end
    assertThat(client.getData().forPath("/inventory/sku-42")).isEqualTo(stock);

    lock.acquire();
    CuratorOp staleCheck = lock.ownershipCheck();
    lock.release();
    CuratorOp write = client.transactionOp().setData().forPath("/inventory/sku-42", new byte[0]);
    assertThatThrownBy(() -> client.transaction().forOperations(staleCheck, write))
        .isInstanceOf(KeeperException.NoNodeException.class);
    assertThat(client.getData().forPath("/inventory/sku-42")).isEqualTo(stock);
  }

  @Test
  void reentrantMutex_revocation_reachesTheHolder() throws Exception {
    CuratorFramework client = zk.newClient();
    // docs/reentrant-mutex.md: revocable
    // import java.util.concurrent.atomic.AtomicBoolean;

    AtomicBoolean stopRequested = new AtomicBoolean(); // the work checks it now and then
    ReentrantMutex lock = new ReentrantMutex(client, "/locks/reindex");
    lock.makeRevocable(revoked -> stopRequested.set(true)); // on a Lockstep thread
    lock.acquire();
    // docs: end
    try {
      // docs/reentrant-mutex.md: revoke
      // import io.lockstep.recipes.locks.LockInspector;
      // import org.apache.curator.framework.recipes.locks.Revoker;

      CuratorFramework admin = zk.newClient(); // docs: ... an operator's client
      String holder = new LockInspector(admin).inspect("/locks/reindex").holders().get(0).node();
      Revoker.attemptRevoke(admin, holder);
      // docs: end
      await().untilTrue(stopRequested);
    } finally {
      lock.release();
    }
  }

  @Test
  void reentrantMutex_afterSessionLoss_checkHeldThrows_andReleaseOnlyClearsLocalState()
      throws Exception {
    CuratorFramework client = zk.newClient();
    FencedStore store = new FencedStore();
    ReentrantMutex lock = new ReentrantMutex(client, "/locks/inventory");
    List<LockState> states = new CopyOnWriteArrayList<>();
    lock.getStateListenable().addListener(change -> states.add(change.state()));
    lock.acquire();
    Sessions.expire(client, zk.server().getConnectString());
    await().until(() -> states.contains(LockState.LOST));
    // docs/reentrant-mutex.md: after a loss
    // import io.lockstep.recipes.locks.LockOwnershipLostException;
    // import org.slf4j.Logger;
    // import org.slf4j.LoggerFactory;

    Logger log = LoggerFactory.getLogger("inventory");
    try {
      lock.checkHeld(); // no request: what this client knows
      store.write("sku-42", "40 in stock", lock.fencingToken());
    } catch (LockOwnershipLostException e) { // an IllegalMonitorStateException
      log.warn("stopping: {}", e.getMessage()); // names the path and the session
    } finally {
      lock.release(); // after a loss: clears local state, logs a warning, does not throw
    }
    // docs: end
    assertThat(store.read("sku-42")).as("the write was skipped").isNull();
    assertThat(states) // usually HELD, AT_RISK (the dropped connection), LOST, RELEASED
        .startsWith(LockState.HELD)
        .endsWith(LockState.LOST, LockState.RELEASED)
        .doesNotHaveDuplicates();
    assertThat(lock.isOwnedByCurrentThread()).isFalse();
    lock.acquire();
    assertThatCode(lock::checkHeld).as("the next hold is a new one").doesNotThrowAnyException();
    lock.release();
  }

  // ---- docs/non-reentrant-mutex.md ----

  @Test
  void nonReentrantMutex_handOff_releasedByTheWorkerThread() throws Exception {
    CuratorFramework client = zk.newClient();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      // docs/non-reentrant-mutex.md: hand-off
      // import java.util.concurrent.Executor;
      // import java.util.concurrent.RejectedExecutionException;

      Executor executor = pool; // docs: ... the service's executor
      FencedStore store = new FencedStore(); // docs: ... your store, see getting-started.md
      NonReentrantMutex lock = new NonReentrantMutex(client, "/locks/nightly-batch");
      lock.acquire();
      try {
        executor.execute(
            () -> {
              try {
                store.write("nightly-batch", "done", lock.fencingToken());
              } finally {
                lock.release(); // any thread may release
              }
            });
      } catch (RejectedExecutionException e) {
        lock.release(); // the task will never run: release here
        throw e;
      }
      // docs: end
      await().until(() -> !lock.isAcquiredInThisProcess());
      assertThat(store.read("nightly-batch")).isEqualTo("done");
      assertThat(lock.getParticipantNodes()).isEmpty();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void nonReentrantMutex_holderThread_isNotLetInAgain() throws Exception {
    // docs/non-reentrant-mutex.md: not reentrant
    // import io.lockstep.recipes.locks.NonReentrantMutex;
    // import java.util.concurrent.TimeUnit;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient(); // docs: ... a started client
    NonReentrantMutex lock = new NonReentrantMutex(client, "/locks/nightly-batch");
    lock.acquire();
    boolean again = lock.acquire(0, TimeUnit.SECONDS); // false: this object already holds it
    // docs: end
    try {
      assertThat(again).isFalse();
      assertThatThrownBy(lock::acquire)
          .isInstanceOf(IllegalMonitorStateException.class)
          .hasMessageContaining("/locks/nightly-batch");
    } finally {
      lock.release();
    }
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  @Test
  void nonReentrantMutex_sharesTheQueueOfCuratorsInterProcessMutex() throws Exception {
    InterProcessMutex curator = new InterProcessMutex(zk.newClient(), "/locks/nightly-batch");
    NonReentrantMutex ours = new NonReentrantMutex(zk.newClient(), "/locks/nightly-batch");

    curator.acquire();
    assertThat(ours.acquire(200, TimeUnit.MILLISECONDS)).isFalse();
    curator.release();

    assertThat(ours.acquire(5, TimeUnit.SECONDS)).isTrue();
    assertThat(ours.getParticipantNodes())
        .singleElement()
        .asString()
        .matches("/locks/nightly-batch/_c_[0-9a-f-]{36}-lock-\\d{10}");
    ours.release();
  }

  // ---- docs/read-write-mutex.md ----

  @Test
  void readWriteMutex_readersShare_andAWriterExcludesThem() throws Exception {
    FencedStore data = new FencedStore();
    data.write("catalog", "v1", 0);
    ReadWriteMutex otherProcess = new ReadWriteMutex(zk.newClient(), "/locks/catalog");
    otherProcess.readLock().acquire();
    // docs/read-write-mutex.md: read
    // import io.lockstep.recipes.locks.ReadWriteMutex;
    // import java.util.function.Consumer;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient(); // docs: ... a started client
    FencedStore store = data; // docs: ... your store, see getting-started.md
    Consumer<String> render = this::render; // docs: ... shows the catalog to a user
    ReadWriteMutex catalog = new ReadWriteMutex(client, "/locks/catalog");
    catalog.readLock().acquire(); // shared with other readers
    try {
      render.accept(store.read("catalog"));
    } finally {
      catalog.readLock().release();
    }
    // docs: end
    assertThat(rendered).containsExactly("v1");
    assertThat(writersKeptOut).containsExactly(true);
    assertThat(catalog.writeLock().acquire(200, TimeUnit.MILLISECONDS))
        .as("a reader of another process keeps the writer out")
        .isFalse();
    otherProcess.readLock().release();
    // docs/read-write-mutex.md: write
    catalog.writeLock().acquire(); // alone: no reader, no other writer
    try {
      store.write("catalog", "v2", catalog.writeLock().fencingToken());
    } finally {
      catalog.writeLock().release();
    }
    // docs: end
    assertThat(store.read("catalog")).isEqualTo("v2");
  }

  @Test
  void readWriteMutex_downgrade_keepsWritersOutUntilTheReadLockIsReleased() throws Exception {
    CuratorFramework client = zk.newClient();
    FencedStore store = new FencedStore();
    ReadWriteMutex catalog = new ReadWriteMutex(client, "/locks/catalog");
    Consumer<String> render = this::render;
    // docs/read-write-mutex.md: downgrade
    catalog.writeLock().acquire();
    try {
      store.write("catalog", "v3", catalog.writeLock().fencingToken());
      catalog.readLock().acquire(); // a downgrade: allowed while holding the write lock
    } finally {
      catalog.writeLock().release(); // readers may enter now; writers still wait for us
    }
    try {
      render.accept(store.read("catalog"));
    } finally {
      catalog.readLock().release();
    }
    // docs: end
    assertThat(rendered).containsExactly("v3");
    assertThat(writersKeptOut)
        .as("our downgraded reader keeps Curator's writer out")
        .containsExactly(true);
    assertThat(catalog.readLock().getParticipantNodes()).isEmpty();
  }

  @Test
  void readWriteMutex_upgrade_isRefusedAtOnce() throws Exception {
    CuratorFramework client = zk.newClient();
    ReadWriteMutex catalog = new ReadWriteMutex(client, "/locks/catalog");
    catalog.readLock().acquire();
    try {
      long start = System.nanoTime();
      // docs/read-write-mutex.md: no upgrade
      // import java.util.concurrent.TimeUnit;

      boolean upgraded = catalog.writeLock().acquire(10, TimeUnit.SECONDS); // false, at once
      // docs: end
      assertThat(upgraded).isFalse();
      assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(5));
      assertThat(catalog.writeLock().getParticipantNodes()).isEmpty();
      assertThatThrownBy(() -> catalog.writeLock().acquire())
          .isInstanceOf(IllegalMonitorStateException.class);
    } finally {
      catalog.readLock().release();
    }
  }

  /** Why docs/read-write-mutex.md keeps read-side tokens out of the writers' comparison. */
  @Test
  void readWriteMutex_theNextWritersToken_exceedsADowngradedReadersToken() throws Exception {
    ReadWriteMutex first = new ReadWriteMutex(zk.newClient(), "/locks/catalog");
    ReadWriteMutex second = new ReadWriteMutex(zk.newClient(), "/locks/catalog");
    first.writeLock().acquire();
    long firstWriter = first.writeLock().fencingToken();
    try (LockThread thread = new LockThread("second-writer")) {
      CompletableFuture<Long> secondWriter =
          thread.call(
              () -> {
                second.writeLock().acquire();
                try {
                  return second.writeLock().fencingToken();
                } finally {
                  second.writeLock().release();
                }
              });
      await().until(() -> first.writeLock().getParticipantNodes().size() == 2);

      first.readLock().acquire(); // the downgrade, after the second writer queued
      long downgradedReader = first.readLock().fencingToken();
      first.writeLock().release();
      assertThat(secondWriter).isNotDone();
      first.readLock().release();

      long next = secondWriter.get(10, TimeUnit.SECONDS);
      assertThat(downgradedReader).isGreaterThan(firstWriter);
      assertThat(next).as("granted after the reader let go").isGreaterThan(downgradedReader);
    }
  }

  // ---- docs/multi-mutex.md ----

  @Test
  void multiMutex_transfer_commitsBothWritesOnlyWhileBothLocksAreHeld() throws Exception {
    CuratorFramework admin = zk.newClient();
    admin.create().orSetData().creatingParentsIfNeeded().forPath("/accounts/17", "100".getBytes());
    admin.create().orSetData().creatingParentsIfNeeded().forPath("/accounts/4", "0".getBytes());
    // docs/multi-mutex.md: transfer
    // import io.lockstep.recipes.locks.MultiMutex;
    // import java.util.ArrayList;
    // import java.util.List;
    // import org.apache.curator.framework.CuratorFramework;
    // import org.apache.curator.framework.api.transaction.CuratorOp;

    CuratorFramework client = zk.newClient(); // docs: ... a started client
    byte[] debited = "70".getBytes(UTF_8); // docs: ... the accounts' new balances
    byte[] credited = "30".getBytes(UTF_8); // docs: ... the accounts' new balances
    MultiMutex transfer =
        new MultiMutex(client, List.of("/locks/accounts/17", "/locks/accounts/4"));
    transfer.acquire(); // one transaction enqueues in both paths
    try {
      List<CuratorOp> ops = new ArrayList<>(transfer.ownershipChecks());
      ops.add(client.transactionOp().setData().forPath("/accounts/17", debited));
      ops.add(client.transactionOp().setData().forPath("/accounts/4", credited));
      client.transaction().forOperations(ops); // commits only while both lock nodes exist
    } finally {
      transfer.release(); // one transaction deletes both nodes
    }
    // docs: end
    assertThat(client.getData().forPath("/accounts/17")).isEqualTo(debited);
    assertThat(client.getData().forPath("/accounts/4")).isEqualTo(credited);
    assertThat(transfer.getParticipantNodes()).isEmpty();
  }

  @Test
  void multiMutex_pathsInOppositeOrders_bothComplete() throws Exception {
    MultiMutex forward = new MultiMutex(zk.newClient(), List.of("/locks/a", "/locks/b"));
    MultiMutex backward = new MultiMutex(zk.newClient(), List.of("/locks/b", "/locks/a"));
    try (LockThread one = new LockThread("forward");
        LockThread two = new LockThread("backward")) {
      List<CompletableFuture<Void>> done = new ArrayList<>();
      for (int round = 0; round < 20; round++) {
        done.add(one.run(() -> cycle(forward)));
        done.add(two.run(() -> cycle(backward)));
      }
      CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
    }
  }

  private static void cycle(MultiMutex lock) throws InterruptedException {
    lock.acquire();
    lock.release();
  }

  @Test
  void multiMutex_builder_locksEachPathInItsOwnMode() throws Exception {
    CuratorFramework client = zk.newClient();
    ReadWriteMutex rates = new ReadWriteMutex(zk.newClient(), "/locks/rates");
    ReadWriteMutex ledger = new ReadWriteMutex(zk.newClient(), "/locks/ledger");
    // docs/multi-mutex.md: modes
    MultiMutex closing =
        MultiMutex.builder(client).write("/locks/ledger").read("/locks/rates").build();
    // docs: end
    closing.acquire();
    try (LockThread other = new LockThread("other")) {
      assertThat(other.call(() -> rates.readLock().acquire(5, TimeUnit.SECONDS)).get())
          .as("another reader of /locks/rates shares")
          .isTrue();
      other.run(rates.readLock()::release).get();
      assertThat(other.call(() -> ledger.readLock().acquire(200, TimeUnit.MILLISECONDS)).get())
          .as("the write lock on /locks/ledger excludes readers")
          .isFalse();
    } finally {
      closing.release();
    }
  }

  @Test
  void multiMutex_fencingToken_isOneZxidForAllPaths() throws Exception {
    CuratorFramework client = zk.newClient();
    MultiMutex transfer =
        new MultiMutex(client, List.of("/locks/accounts/17", "/locks/accounts/4"));
    transfer.acquire();
    try {
      for (String node : transfer.getParticipantNodes()) {
        assertThat(client.checkExists().forPath(node).getCzxid())
            .isEqualTo(transfer.fencingToken());
      }
    } finally {
      transfer.release();
    }
  }

  // ---- docs/lock-inspector.md ----

  @Test
  void lockInspector_listsTheHolderAndTheWaiters() throws Exception {
    ReentrantMutex holder = new ReentrantMutex(zk.newClient(), "/locks/orders");
    InterProcessMutex curatorWaiter = new InterProcessMutex(zk.newClient(), "/locks/orders");
    holder.acquire();
    try (LockThread thread = new LockThread("curator")) {
      CompletableFuture<Boolean> waiting =
          thread.call(() -> curatorWaiter.acquire(20, TimeUnit.SECONDS));
      await().until(() -> holder.getParticipantNodes().size() == 2);
      // docs/lock-inspector.md: inspect
      // import io.lockstep.recipes.locks.LockInspector;
      // import org.apache.curator.framework.CuratorFramework;
      // import org.slf4j.Logger;
      // import org.slf4j.LoggerFactory;

      CuratorFramework client = zk.newClient(); // docs: ... a started client
      Logger log = LoggerFactory.getLogger("locks");
      LockInspector.Snapshot snapshot = new LockInspector(client).inspect("/locks/orders");
      for (LockInspector.Entry entry : snapshot.holders()) {
        log.info("held by session 0x{} for {}", Long.toHexString(entry.sessionId()), entry.age());
      }
      log.info("{} waiting", snapshot.waiters().size());
      // docs: end
      assertThat(snapshot.holders())
          .singleElement()
          .extracting(LockInspector.Entry::sessionId)
          .isNotEqualTo(0L);
      assertThat(snapshot.waiters()).hasSize(1);
      holder.release();
      assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
      thread.run(curatorWaiter::release).get();
    }
  }

  @Test
  void lockInspector_semaphore_holdersAndWaiters() throws Exception {
    List<LockHold> held = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      held.add(new CountingSemaphore(zk.newClient(), "/semaphores/exports", 4).acquire());
    }
    CompletableFuture<LockHold> waiting =
        new CountingSemaphore(zk.newClient(), "/semaphores/exports", 4)
            .acquireAsync(Duration.ofSeconds(20))
            .toCompletableFuture();
    await()
        .until(
            () ->
                new LockInspector(zk.newClient())
                        .inspectSemaphore("/semaphores/exports", 4)
                        .waiters()
                        .size()
                    == 1);
    // docs/lock-inspector.md: inspect a semaphore
    // import io.lockstep.recipes.locks.LockInspector;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient(); // docs: ... a started client
    LockInspector.Snapshot exports =
        new LockInspector(client).inspectSemaphore("/semaphores/exports", 4);
    System.out.println(
        exports.holders().size() + " held, " + exports.waiters().size() + " waiting");
    // docs: end
    assertThat(exports.holders()).hasSize(4);
    assertThat(exports.waiters()).hasSize(1);
    held.get(0).close();
    waiting.get(10, TimeUnit.SECONDS).close();
    for (LockHold hold : held.subList(1, 4)) {
      hold.close();
    }
  }

  // ---- docs/migration.md ----

  @Test
  void migration_curatorMutex_beforeAndAfter() throws Exception {
    {
      // docs/migration.md: before
      // import java.util.Map;
      // import org.apache.curator.framework.CuratorFramework;
      // import org.apache.curator.framework.recipes.locks.InterProcessMutex;

      CuratorFramework client = zk.newClient(); // docs: ... a started client
      Map<String, String> orders = new HashMap<>(); // docs: ... your store
      InterProcessMutex lock = new InterProcessMutex(client, "/locks/orders");
      lock.acquire();
      try {
        orders.put("order-17", "shipped");
      } finally {
        lock.release();
      }
      // docs: end
      assertThat(orders).containsEntry("order-17", "shipped");
    }
    {
      CuratorFramework client = zk.newClient();
      // docs/migration.md: after
      // import io.lockstep.recipes.locks.ReentrantMutex;

      FencedStore orders = new FencedStore(); // docs: ... your store, now refusing stale tokens
      ReentrantMutex lock = new ReentrantMutex(client, "/locks/orders");
      lock.acquire();
      try {
        orders.write("order-17", "shipped", lock.fencingToken());
      } finally {
        lock.release();
      }
      // docs: end
      assertThat(orders.read("order-17")).isEqualTo("shipped");
      assertThat(lock.getParticipantNodes()).isEmpty();
    }
  }

  @Test
  void migration_keepingTheInterfaceType_changesOnlyTheConstructor() throws Exception {
    CuratorFramework client = zk.newClient();
    // docs/migration.md: interface type
    // import org.apache.curator.framework.recipes.locks.InterProcessLock;

    InterProcessLock lock = new ReentrantMutex(client, "/locks/orders"); // was InterProcessMutex
    // docs: end
    assertThat(lock.acquire(5, TimeUnit.SECONDS)).isTrue();
    lock.release();
  }

  @Test
  void migration_catchingZooKeeperFailures_catchesLockException() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(client, "/locks/orders");
    client.close(); // every acquire now fails
    assertThatThrownBy(
            () -> {
              // docs/migration.md: exceptions
              // import io.lockstep.recipes.locks.LockException;
              // import org.slf4j.Logger;
              // import org.slf4j.LoggerFactory;

              Logger log = LoggerFactory.getLogger("orders");
              try {
                lock.acquire();
              } catch (LockException e) { // was: catch (KeeperException e)
                log.warn("could not lock: {}", e.getMessage()); // the message names the path
                throw new IllegalStateException("orders are unavailable", e);
              }
              // docs: end
            })
        .isInstanceOf(IllegalStateException.class)
        .cause()
        .isInstanceOf(LockException.class)
        .hasMessageContaining("/locks/orders");
    assertThat(lock.isAcquiredInThisProcess()).isFalse();
  }

  @Test
  void migration_multiLock_replacesCuratorsWithTheSameArguments() throws Exception {
    CuratorFramework client = zk.newClient();
    List<String> paths = List.of("/locks/accounts/17", "/locks/accounts/4");
    InterProcessMultiLock old = new InterProcessMultiLock(zk.newClient(), paths);
    MultiMutex lock = new MultiMutex(client, paths);

    old.acquire();
    assertThat(lock.acquire(200, TimeUnit.MILLISECONDS)).isFalse();
    old.release();
    assertThat(lock.acquire(5, TimeUnit.SECONDS)).isTrue();
    lock.release();
  }

  /**
   * Why docs/migration.md says to move multi-lock users of shared paths together: a Curator
   * multi-lock that has taken its first path and an atomic {@link MultiMutex} enqueued after that
   * wait for each other, even though every Curator caller uses the same path order.
   */
  @Test
  void migration_curatorPathByPathAndAtomicMultiMutex_canWaitForEachOther() throws Exception {
    CuratorFramework curatorClient = zk.newClient();
    CuratorFramework admin = zk.newClient();
    // Curator's InterProcessMultiLock takes its paths one after the other, like this:
    InterProcessMutex curatorFirst = new InterProcessMutex(curatorClient, "/locks/pair/a");
    InterProcessMutex curatorSecond = new InterProcessMutex(curatorClient, "/locks/pair/b");
    MultiMutex atomic = new MultiMutex(zk.newClient(), List.of("/locks/pair/a", "/locks/pair/b"));
    curatorFirst.acquire();
    try (LockThread thread = new LockThread("atomic")) {
      CompletableFuture<Boolean> waiting = thread.call(() -> atomic.acquire(20, TimeUnit.SECONDS));
      await().until(() -> admin.getChildren().forPath("/locks/pair/a").size() == 2);

      boolean second = curatorSecond.acquire(500, TimeUnit.MILLISECONDS);

      assertThat(second).as("the atomic lock is ahead in /b and behind Curator in /a").isFalse();
      assertThat(waiting).isNotDone();
      curatorFirst.release(); // what a timeout would do: break the cycle
      assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
      thread.run(atomic::release).get();
    }
  }

  @Test
  void migration_semaphoreMutex_excludesCuratorsSemaphoreMutex_onItsNodes() throws Exception {
    CuratorFramework client = zk.newClient();
    InterProcessSemaphoreMutex oldInstance =
        new InterProcessSemaphoreMutex(zk.newClient(), "/locks/nightly-batch");
    // docs/migration.md: semaphore mutex
    // import io.lockstep.recipes.locks.SemaphoreMutex;

    SemaphoreMutex lock = new SemaphoreMutex(client, "/locks/nightly-batch"); // Curator's nodes
    // docs: end

    oldInstance.acquire();
    assertThat(lock.acquire(200, TimeUnit.MILLISECONDS)).as("an old instance holds").isFalse();
    oldInstance.release();
    lock.acquire();
    assertThat(oldInstance.acquire(200, TimeUnit.MILLISECONDS)).as("a new one holds").isFalse();
    assertThat(lock.fencingToken()).isPositive();
    lock.release();
  }

  @Test
  void migration_semaphoreMutexBridge_excludesOldAndNewInstances() throws Exception {
    CuratorFramework client = zk.newClient();
    InterProcessSemaphoreMutex oldInstance =
        new InterProcessSemaphoreMutex(zk.newClient(), "/locks/nightly-batch");
    NonReentrantMutex newInstance = new NonReentrantMutex(zk.newClient(), "/locks/nightly-batch");
    // docs/migration.md: bridge
    // import io.lockstep.recipes.locks.MultiMutex;
    // import io.lockstep.recipes.locks.NonReentrantMutex;
    // import java.util.List;
    // import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;

    MultiMutex lock =
        new MultiMutex(
            List.of(
                new InterProcessSemaphoreMutex(client, "/locks/nightly-batch"), // old instances
                new NonReentrantMutex(client, "/locks/nightly-batch"))); // new instances
    // docs: end

    oldInstance.acquire();
    assertThat(lock.acquire(200, TimeUnit.MILLISECONDS)).as("an old instance holds").isFalse();
    oldInstance.release();
    newInstance.acquire();
    assertThat(lock.acquire(200, TimeUnit.MILLISECONDS)).as("a new instance holds").isFalse();
    newInstance.release();

    assertThat(lock.acquire(5, TimeUnit.SECONDS)).isTrue();
    assertThat(oldInstance.acquire(200, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(newInstance.acquire(200, TimeUnit.MILLISECONDS)).isFalse();
    lock.release();
  }

  @Test
  void migration_nonReentrantMutex_doesNotExcludeCuratorsSemaphoreMutex() throws Exception {
    InterProcessSemaphoreMutex old =
        new InterProcessSemaphoreMutex(zk.newClient(), "/locks/nightly-batch");
    NonReentrantMutex replacement = new NonReentrantMutex(zk.newClient(), "/locks/nightly-batch");

    old.acquire();
    boolean bothHold = replacement.acquire(5, TimeUnit.SECONDS);

    assertThat(bothHold).as("different node layouts: no exclusion").isTrue();
    replacement.release();
    old.release();
  }

  /** The request counts of the feature table in docs/index.md, counted by the server. */
  @Test
  void index_requestsPerUncontendedCycle_areAsTheFeatureTableSays() throws Exception {
    List<String> four = List.of("/locks/k/1", "/locks/k/2", "/locks/k/3", "/locks/k/4");
    Map<String, Long> counts = new LinkedHashMap<>();
    counts.put("ReentrantMutex", cycle(c -> new ReentrantMutex(c, "/locks/m"), "/locks/m"));
    counts.put("InterProcessMutex", cycle(c -> new InterProcessMutex(c, "/locks/m"), "/locks/m"));
    counts.put("NonReentrantMutex", cycle(c -> new NonReentrantMutex(c, "/locks/s"), "/locks/s"));
    counts.put(
        "InterProcessSemaphoreMutex",
        cycle(
            c -> new InterProcessSemaphoreMutex(c, "/locks/s"),
            "/locks/s/locks",
            "/locks/s/leases"));
    counts.put(
        "SemaphoreMutex",
        cycle(c -> new SemaphoreMutex(c, "/locks/s"), "/locks/s/locks", "/locks/s/leases"));
    counts.put(
        "ReadWriteMutex.writeLock",
        cycle(c -> new ReadWriteMutex(c, "/locks/rw").writeLock(), "/locks/rw"));
    counts.put(
        "ReadWriteMutex.readLock",
        cycle(c -> new ReadWriteMutex(c, "/locks/rw").readLock(), "/locks/rw"));
    counts.put(
        "InterProcessReadWriteLock.writeLock",
        cycle(c -> new InterProcessReadWriteLock(c, "/locks/rw").writeLock(), "/locks/rw"));
    counts.put(
        "InterProcessReadWriteLock.readLock",
        cycle(c -> new InterProcessReadWriteLock(c, "/locks/rw").readLock(), "/locks/rw"));
    counts.put("MultiMutex(4)", cycle(c -> new MultiMutex(c, four), four.toArray(new String[0])));
    counts.put(
        "InterProcessMultiLock(4)",
        cycle(c -> new InterProcessMultiLock(c, four), four.toArray(new String[0])));
    counts.put(
        "CountingSemaphore",
        cycle(
            c -> oneLease(new CountingSemaphore(c, "/locks/sem", 2)::acquire),
            "/locks/sem/leases"));
    counts.put(
        "InterProcessSemaphoreV2",
        cycle(
            c -> oneLease(new InterProcessSemaphoreV2(c, "/locks/sem", 2)::acquire),
            "/locks/sem/locks",
            "/locks/sem/leases"));

    Map<String, Long> expected = new LinkedHashMap<>();
    expected.put("ReentrantMutex", 3L);
    expected.put("InterProcessMutex", 3L);
    expected.put("NonReentrantMutex", 3L);
    expected.put("InterProcessSemaphoreMutex", 7L);
    expected.put("SemaphoreMutex", 3L);
    expected.put("ReadWriteMutex.writeLock", 3L);
    expected.put("ReadWriteMutex.readLock", 3L);
    expected.put("InterProcessReadWriteLock.writeLock", 3L);
    expected.put("InterProcessReadWriteLock.readLock", 3L);
    expected.put("MultiMutex(4)", 3L);
    expected.put("InterProcessMultiLock(4)", 12L);
    expected.put("CountingSemaphore", 3L);
    expected.put("InterProcessSemaphoreV2", 7L);
    assertThat(counts).containsExactlyEntriesOf(expected);
  }

  /** A lock made on a fresh client, for one uncontended cycle. */
  private interface LockFactory {
    InterProcessLock make(CuratorFramework client);
  }

  /** A semaphore's one lease as a lock, for {@link #cycle}: taken by {@code take}, closed back. */
  private static InterProcessLock oneLease(Callable<? extends AutoCloseable> take) {
    return new InterProcessLock() {
      private AutoCloseable lease;

      @Override
      public void acquire() throws Exception {
        lease = take.call();
      }

      @Override
      public boolean acquire(long time, TimeUnit unit) throws Exception {
        acquire();
        return true;
      }

      @Override
      public void release() throws Exception {
        lease.close();
        lease = null;
      }

      @Override
      public boolean isAcquiredInThisProcess() {
        return lease != null;
      }
    };
  }

  /** Requests of one acquire and release, with the lock directories already in place. */
  private long cycle(LockFactory factory, String... directories) throws Exception {
    CuratorFramework client = zk.newClient();
    for (String directory : directories) {
      client.create().orSetData().creatingParentsIfNeeded().forPath(directory);
    }
    InterProcessLock lock = factory.make(client);
    long before = zk.requestsSoFar(client);
    lock.acquire();
    lock.release();
    return zk.requestsSoFar(client) - before;
  }

  // ---- docs/design.md ----

  @Test
  void groupDriver_letsOneGroupShare_andGroupsTakeTurnsInArrivalOrder() throws Exception {
    // docs/design.md: use a driver
    // import io.lockstep.recipes.locks.ReentrantMutex;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient(); // docs: ... a started client
    ReentrantMutex migration = new ReentrantMutex(client, "/locks/schema", new GroupDriver("v42"));
    // docs: end
    ReentrantMutex sameGroup =
        new ReentrantMutex(zk.newClient(), "/locks/schema", new GroupDriver("v42"));
    ReentrantMutex otherGroup =
        new ReentrantMutex(zk.newClient(), "/locks/schema", new GroupDriver("v43"));
    ReentrantMutex lateSameGroup =
        new ReentrantMutex(zk.newClient(), "/locks/schema", new GroupDriver("v42"));
    try (LockThread a = new LockThread("v42-a");
        LockThread b = new LockThread("v42-b");
        LockThread c = new LockThread("v43");
        LockThread d = new LockThread("v42-late")) {
      a.run(migration::acquire).get(10, TimeUnit.SECONDS);
      assertThat(b.call(() -> sameGroup.acquire(5, TimeUnit.SECONDS)).get()).isTrue();
      CompletableFuture<Void> other = c.run(otherGroup::acquire);
      await().until(() -> migration.getParticipantNodes().size() == 3);

      assertThat(d.call(() -> lateSameGroup.acquire(300, TimeUnit.MILLISECONDS)).get())
          .as("a v42 arriving after a waiting v43 waits its turn")
          .isFalse();
      assertThat(other).isNotDone();
      a.run(migration::release).get();
      assertThat(other).isNotDone();
      b.run(sameGroup::release).get();
      other.get(10, TimeUnit.SECONDS);
      c.run(otherGroup::release).get();
    }
  }

  // docs/design.md: a driver
  // import io.lockstep.recipes.locks.LockDecision;
  // import io.lockstep.recipes.locks.LockDriver;
  // import java.util.List;

  /** Participants of one group share the lock; groups take turns in arrival order. */
  static final class GroupDriver implements LockDriver {
    private final String group;

    GroupDriver(String group) {
      if (!group.matches("[a-z0-9]+")) {
        throw new IllegalArgumentException("group must be lower-case letters and digits");
      }
      this.group = group;
    }

    /** Nodes are named _c_<uuid>-group-<group>-<sequence>. */
    @Override
    public String lockName() {
      return "group-" + group + "-";
    }

    /** Every group sorts by the sequence number alone, so all participants agree. */
    @Override
    public String sortKey(String nodeName) {
      return nodeName.substring(nodeName.lastIndexOf('-') + 1);
    }

    /** Hold when every node ahead is of our group; else watch the nearest one that is not. */
    @Override
    public LockDecision decide(List<String> sortedNodeNames, String ourNodeName) {
      for (int i = sortedNodeNames.indexOf(ourNodeName) - 1; i >= 0; i--) {
        if (!sortedNodeNames.get(i).contains(lockName())) {
          return LockDecision.watch(sortedNodeNames.get(i));
        }
      }
      return LockDecision.hold();
    }

    /** Sequence numbers only grow, and the first node always holds. */
    @Override
    public boolean newNodesSortLast() {
      return true;
    }
  }

  // docs: end

  // ---- the check that keeps the pages and this class in step ----

  private static final Pattern MARKER =
      Pattern.compile("^\\s*// ((?:README\\.md|docs/[\\w.-]+\\.md)): (.+)$");
  private static final Pattern END = Pattern.compile("^\\s*// docs: end$");
  private static final Pattern SHOWN_IMPORT =
      Pattern.compile("^(\\s*)// (import (?:static )?[\\w.]+(?:\\.\\*)?;)$");
  private static final Pattern SHOWN_GIVEN =
      Pattern.compile("^(\\s*)(.*?) = .*; // docs: \\.\\.\\.(.*)$");
  private static final Pattern JAVA_BLOCK =
      Pattern.compile("(?ms)^( *)```java\\n(.*?)^\\1```[ \\t]*$");

  @Test
  void everyJavaBlockOfTheDocs_isAnExampleOfThisTest() throws IOException {
    Path root = repositoryRoot();
    Path sources = root.resolve("recipes-test/src/test/java/io/lockstep/docs");
    List<String> problems = new ArrayList<>();
    List<String> lines = new ArrayList<>();
    try (Stream<Path> tests = Files.list(sources)) {
      for (Path test :
          tests.filter(p -> p.toString().endsWith("ExamplesTest.java")).sorted().toList()) {
        lines.addAll(Files.readAllLines(test));
      }
    }
    Map<String, List<String>> examples = examplesByPage(lines, problems);
    List<Path> pages = new ArrayList<>();
    pages.add(root.resolve("README.md"));
    try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }

    for (Path page : pages) {
      String name = root.relativize(page).toString().replace('\\', '/');
      List<String> blocks = javaBlocks(Files.readString(page));
      List<String> marked = examples.getOrDefault(name, List.of());
      for (String block : blocks) {
        if (!marked.contains(block)) {
          problems.add(
              name
                  + " shows Java code that is no example of this test (copy it from an example"
                  + " between '// "
                  + name
                  + ": <title>' and '// docs: end' here):\n"
                  + block);
        }
      }
      for (String example : marked) {
        if (!blocks.contains(example)) {
          problems.add(name + " lacks this example of the test, or shows it altered:\n" + example);
        }
      }
    }
    for (String page : examples.keySet()) {
      if (!Files.exists(root.resolve(page))) {
        problems.add("an example is marked for " + page + ", which does not exist");
      }
    }
    assertThat(problems).isEmpty();
    assertThat(examples).containsKeys("README.md", "docs/getting-started.md");
  }

  /**
   * The examples of this source, by page: the lines between a marker and the next end comment,
   * without their common indentation. A page and title marked twice is reported as a problem.
   */
  private static Map<String, List<String>> examplesByPage(
      List<String> lines, List<String> problems) {
    Map<String, List<String>> examples = new LinkedHashMap<>();
    List<String> titles = new ArrayList<>();
    String page = null;
    StringBuilder current = null;
    for (String line : lines) {
      Matcher marker = MARKER.matcher(line);
      if (current == null && marker.matches()) {
        String title = marker.group(1) + ": " + marker.group(2);
        if (titles.contains(title)) {
          problems.add("the example '" + title + "' is marked twice");
        }
        titles.add(title);
        page = marker.group(1);
        current = new StringBuilder();
      } else if (current != null && END.matcher(line).matches()) {
        examples.computeIfAbsent(page, p -> new ArrayList<>()).add(dedent(current.toString()));
        current = null;
      } else if (current != null) {
        current.append(shown(line)).append('\n');
      }
    }
    if (current != null) {
      problems.add("the last example of " + page + " is not closed by '// docs: end'");
    }
    return examples;
  }

  /**
   * A line of an example as the page shows it: {@code // import a.B;} as {@code import a.B;} (a
   * page names the imports its examples need, see {@link DocsCompileTest}), and {@code Type name =
   * expression; // docs: ... comment} as {@code Type name = ...; // comment}, for what the reader
   * brings and the test makes (a client, a store, an executor).
   */
  static String shown(String line) {
    Matcher imported = SHOWN_IMPORT.matcher(line);
    if (imported.matches()) {
      return imported.group(1) + imported.group(2);
    }
    Matcher given = SHOWN_GIVEN.matcher(line);
    if (given.matches()) {
      String comment = given.group(3).strip();
      return given.group(1)
          + given.group(2)
          + " = ...;"
          + (comment.isEmpty() ? "" : " // " + comment);
    }
    return line;
  }

  private static List<String> javaBlocks(String markdown) {
    List<String> blocks = new ArrayList<>();
    Matcher matcher = JAVA_BLOCK.matcher(markdown);
    while (matcher.find()) {
      blocks.add(dedent(matcher.group(2)));
    }
    return blocks;
  }

  /** Removes the indentation all non-blank lines share, and trailing blanks. */
  private static String dedent(String text) {
    List<String> lines = text.lines().collect(Collectors.toList());
    int indent =
        lines.stream()
            .filter(line -> !line.isBlank())
            .mapToInt(line -> line.length() - line.stripLeading().length())
            .min()
            .orElse(0);
    return lines.stream()
        .map(line -> line.isBlank() ? "" : line.substring(indent))
        .collect(Collectors.joining("\n"))
        .strip();
  }

  static Path repositoryRoot() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.isDirectory(dir.resolve("docs"))) {
      dir = dir.getParent();
    }
    assertThat(dir).as("a parent directory with docs/").isNotNull();
    return dir;
  }
}

package io.lockstep.recipes.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockAttempt;
import io.lockstep.recipes.locks.LockObserver;
import io.lockstep.recipes.locks.LockObservers;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZeroBudgetTry;
import io.lockstep.testing.ZooKeeperExtension;
import java.io.IOException;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.assertj.core.api.SoftAssertions;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.integration.util.CheckedCallable;
import org.springframework.integration.util.CheckedRunnable;

/**
 * Time to live of the registry's holds ({@code DistributedLock}, {@code RenewableLockRegistry}): a
 * hold that outlives it fails safe (node deleted, hold LOST, its token refused), renewal keeps it,
 * an unlock of an expired hold throws as Spring's JDBC and Redis registries do, and an expiry
 * racing an unlock leaves no node whichever wins. The behaviour Spring's {@code
 * JdbcLockRegistryTests} pins for TTL and renewal, on ZooKeeper.
 */
@Timeout(120)
class LockstepLockTtlTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void holdOutlivingItsTtl_losesItsNode_turnsLost_andAnotherProcessGetsAGreaterToken()
      throws Exception {
    CuratorFramework admin = zk.newClient();
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("r"));
    LockstepLockRegistry otherProcess = new LockstepLockRegistry(zk.newClient(), zk.path("r"));
    DistributedLock distributed = registry.obtain("orders");
    LockstepLock lock = (LockstepLock) distributed;
    List<LockState> states = new CopyOnWriteArrayList<>();
    lock.fencedLock().getStateListenable().addListener(change -> states.add(change.state()));
    List<LockState> observed = new CopyOnWriteArrayList<>();
    LockObservers.of(lock.fencedLock())
        .addListener(
            new LockObserver() {
              @Override
              public void stateChanged(LockAttempt attempt, LockState state, long token) {
                observed.add(state);
              }
            });

    distributed.lock(Duration.ofMillis(300));
    long token = lock.fencingToken();
    String node = lock.fencedLock().getParticipantNodes().iterator().next();

    await().until(() -> admin.checkExists().forPath(node) == null);
    await().until(() -> states.contains(LockState.LOST));
    assertThat(observed).contains(LockState.LOST);
    assertThatThrownBy(lock::fencingToken).isInstanceOf(LockOwnershipLostException.class);
    assertThatThrownBy(lock.fencedLock()::checkHeld)
        .isInstanceOf(LockOwnershipLostException.class)
        .hasMessageContaining("time to live");
    assertThatThrownBy(lock.fencedLock()::ownershipChecks)
        .isInstanceOf(LockOwnershipLostException.class);

    LockstepLock other = otherProcess.obtain("orders");
    try (LockThread thread = new LockThread("other process")) {
      thread.run(() -> assertThat(other.tryLock(10, TimeUnit.SECONDS)).isTrue()).get();
      assertThat(thread.call(other::fencingToken).get()).isGreaterThan(token);
      assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
      assertThat(lock.fencedLock().isAcquiredInThisProcess()).as("unlock cleared it").isFalse();
      assertThat(states).endsWith(LockState.LOST, LockState.RELEASED);
      thread.run(other::unlock).get();
    }
  }

  @Test
  void renewBeforeExpiry_keepsTheHold_andAnotherProcessCannotTakeIt() throws Exception {
    CuratorFramework admin = zk.newClient();
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("r"));
    LockstepLock other = new LockstepLockRegistry(zk.newClient(), zk.path("r")).obtain("orders");
    LockstepLock lock = registry.obtain("orders");
    assertThat(lock.tryLock(Duration.ofSeconds(10), Duration.ofMillis(500))).isTrue();
    String node = lock.fencedLock().getParticipantNodes().iterator().next();

    registry.renewLock("orders", Duration.ofMinutes(5));

    await() // past the first deadline, the hold holds throughout
        .pollInSameThread()
        .during(Duration.ofMillis(1_500))
        .atMost(Duration.ofSeconds(10))
        .until(() -> !isLost(lock) && admin.checkExists().forPath(node) != null);
    try (LockThread thread = new LockThread("other process")) {
      assertThat(thread.call(() -> other.tryLock(200, TimeUnit.MILLISECONDS)).get()).isFalse();
    }
    registry.renewLock("orders"); // for its own time to live again: five minutes
    lock.unlock(); // no exception: it did not expire
    assertThat(admin.checkExists().forPath(node)).isNull();
  }

  @Test
  void renewLock_ofAKeyTheThreadDoesNotHold_throwsIllegalMonitorState() throws Exception {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("r"));
    RenewableLockRegistry<LockstepLock> renewable = registry;
    renewable.obtain("orders");

    assertThatThrownBy(() -> renewable.renewLock("orders"))
        .isInstanceOf(IllegalMonitorStateException.class);
    LockstepLock lock = registry.obtain("orders");
    lock.lock(Duration.ofMinutes(5));
    try (LockThread thread = new LockThread("another thread")) {
      assertThat(thread.run(() -> renewable.renewLock("orders", Duration.ofMinutes(1))))
          .failsWithin(Duration.ofSeconds(10))
          .withThrowableOfType(ExecutionException.class)
          .withCauseInstanceOf(IllegalMonitorStateException.class);
    }
    lock.unlock();
    assertThatThrownBy(() -> renewable.renewLock("orders", Duration.ofMinutes(1)))
        .isInstanceOf(IllegalMonitorStateException.class);
  }

  @Test
  void renewLock_afterTheTtlRanOut_throwsIllegalState() throws Exception {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("r"));
    LockstepLock lock = registry.obtain("orders");
    lock.lock(Duration.ofMillis(100));
    await().pollInSameThread().until(() -> isLost(lock));

    assertThatThrownBy(() -> registry.renewLock("orders"))
        .isInstanceOf(IllegalStateException.class)
        .isNotInstanceOf(IllegalMonitorStateException.class);
    assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
  }

  @Test
  void defaultTtl_appliesToLockWithoutOne_andWithoutADefaultAHoldDoesNotExpire() throws Exception {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("r"));
    assertThat(registry.defaultTtl()).isNull();
    LockstepLock lock = registry.obtain("orders");
    lock.lock();
    await()
        .pollInSameThread()
        .during(Duration.ofMillis(500))
        .atMost(Duration.ofSeconds(10))
        .until(() -> !isLost(lock));
    lock.unlock();

    registry.setDefaultTtl(Duration.ofMillis(200));
    ZeroBudgetTry.granted("tryLock()", lock::tryLock, () -> lock.tryLock(10, TimeUnit.SECONDS));
    await().pollInSameThread().until(() -> isLost(lock));
    assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
  }

  @Test
  void badTtl_isRefused_andSendsNothing() {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("r"));
    LockstepLock lock = registry.obtain("orders");

    assertThatThrownBy(() -> lock.lock(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ttl");
    assertThatThrownBy(() -> lock.tryLock(Duration.ofSeconds(1), Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ttl");
    assertThatThrownBy(() -> lock.lock(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> registry.renewLock("orders", null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> registry.setDefaultTtl(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(lock.fencedLock().getParticipantNodes()).isEmpty();
    assertThat(lock.fencedLock().isAcquiredInThisProcess()).isFalse();
  }

  /**
   * An expiry racing the unlock: whichever wins, the node is gone, and the unlock either returns or
   * throws {@link ConcurrentModificationException}, never anything else.
   */
  @Test
  void expiryRacingUnlock_leavesNoNode_andUnlockThrowsOnlyConcurrentModification()
      throws Exception {
    CuratorFramework admin = zk.newClient();
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("r"));
    LockstepLock lock = registry.obtain("orders");
    int expired = 0;
    for (int i = 0; i < 300; i++) {
      lock.lock(Duration.ofMillis(1 + ThreadLocalRandom.current().nextInt(3)));
      long spin = ThreadLocalRandom.current().nextLong(3_000_000);
      long start = System.nanoTime();
      while (System.nanoTime() - start < spin) {
        Thread.onSpinWait(); // unlock around the deadline
      }
      try {
        lock.unlock();
      } catch (ConcurrentModificationException e) {
        expired++;
      }
      assertThat(lock.fencedLock().isAcquiredInThisProcess()).isFalse();
    }
    String path = registry.pathOf("orders");
    await()
        .ignoreException(KeeperException.NoNodeException.class) // reaped once empty
        .until(() -> ZooKeeperExtension.childrenOrNone(admin, path).isEmpty());
    System.out.println("expiry won " + expired + " of 300 races");
    ZeroBudgetTry.granted(
        "nothing in the way", lock::tryLock, () -> lock.tryLock(10, TimeUnit.SECONDS));
    lock.unlock();
  }

  /**
   * ZooKeeper unreachable: the hold still turns LOST at its deadline, locally; the delete goes on
   * in the background, and the node is gone once the server is back.
   */
  @Test
  void ttlDuringAnOutage_holdTurnsLostAtTheDeadline_andTheNodeIsGoneAfterTheRestart()
      throws Exception {
    CuratorFramework client =
        zk.newClient(builder -> builder.sessionTimeoutMs(20_000).connectionTimeoutMs(1_000));
    LockstepLockRegistry registry = new LockstepLockRegistry(client, zk.path("r"));
    LockstepLock lock = registry.obtain("orders");
    List<LockState> states = new CopyOnWriteArrayList<>();
    lock.fencedLock().getStateListenable().addListener(change -> states.add(change.state()));
    lock.lock(Duration.ofSeconds(2));
    String node = lock.fencedLock().getParticipantNodes().iterator().next();

    zk.server().stop();
    try {
      await().until(() -> states.contains(LockState.AT_RISK));
      await().atMost(Duration.ofSeconds(15)).until(() -> states.contains(LockState.LOST));
      assertThatThrownBy(lock::fencingToken).isInstanceOf(LockOwnershipLostException.class);
      assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
    } finally {
      zk.server().restart();
    }

    CuratorFramework admin = zk.newClient();
    await().atMost(Duration.ofSeconds(60)).until(() -> admin.checkExists().forPath(node) == null);
  }

  /** Whether the calling thread's hold was lost (the owning thread must ask). */
  /**
   * Each of Spring's four {@code executeLocked} forms, with a task that fails after its hold's time
   * to live ran out: the caller gets the task's own exception, the unlock's {@code
   * ConcurrentModificationException} suppressed in it. Before, Spring's default methods unlocked in
   * a {@code finally}, and the unlock's exception replaced the task's.
   */
  @Test
  void executeLocked_taskFailingAfterItsTtlRanOut_throwsItsOwnException_expirySuppressed() {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("r"));
    registry.setDefaultTtl(Duration.ofMillis(200));
    CheckedRunnable<IOException> runnable =
        () -> {
          await().pollInSameThread().until(() -> isLost(registry.obtain("orders")));
          throw new IOException("disk full");
        };
    CheckedCallable<String, IOException> callable =
        () -> {
          runnable.run();
          return "not reached";
        };

    SoftAssertions softly = new SoftAssertions(); // each form's failure, not the first one's only
    for (Map.Entry<String, ThrowingCallable> form :
        executeLockedForms(registry, runnable, callable)) {
      Throwable thrown = catchThrowable(form.getValue());
      softly.assertThat(thrown).as(form.getKey()).isInstanceOf(IOException.class);
      softly
          .assertThat(thrown.getSuppressed())
          .as(form.getKey() + ": suppressed")
          .hasExactlyElementsOfTypes(ConcurrentModificationException.class);
      softly
          .assertThat(registry.obtain("orders").fencedLock().isAcquiredInThisProcess())
          .as(form.getKey() + ": released")
          .isFalse();
    }
    softly.assertAll();
  }

  /**
   * Each {@code executeLocked} form, with a task that returns after its hold's time to live ran
   * out: the expiry is what the caller gets, {@code ConcurrentModificationException}, as from
   * {@code unlock()}.
   */
  @Test
  void executeLocked_taskSucceedingAfterItsTtlRanOut_throwsConcurrentModification() {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("r"));
    registry.setDefaultTtl(Duration.ofMillis(200));
    CheckedRunnable<RuntimeException> runnable =
        () -> await().pollInSameThread().until(() -> isLost(registry.obtain("orders")));
    CheckedCallable<String, RuntimeException> callable =
        () -> {
          runnable.run();
          return "done, too late";
        };

    for (Map.Entry<String, ThrowingCallable> form :
        executeLockedForms(registry, runnable, callable)) {
      assertThatThrownBy(form.getValue())
          .as(form.getKey())
          .isInstanceOf(ConcurrentModificationException.class)
          .hasMessageContaining("time to live");
      assertThat(registry.obtain("orders").fencedLock().isAcquiredInThisProcess())
          .as(form.getKey() + ": released")
          .isFalse();
    }
  }

  /**
   * A hold unlocked through {@code lockView()} leaves its deadline behind: the thread's next {@code
   * lock(ttl)} times its own hold, and does not extend the one left behind.
   */
  @Test
  void lockWithTtl_afterAnUnlockThroughTheLockView_timesTheNewHold() {
    LockstepLock lock = new LockstepLockRegistry(zk.newClient(), zk.path("r")).obtain("orders");
    lock.lock(Duration.ofMinutes(5));
    lock.lockView().unlock(); // the view knows no deadlines

    lock.lock(Duration.ofMillis(200));

    await().pollInSameThread().until(() -> isLost(lock));
    assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
  }

  /**
   * {@code renewLock} of a hold taken without a time to live, after an earlier hold was unlocked
   * through {@code lockView()}: the new hold gets the deadline, not the one left behind.
   */
  @Test
  void renewLock_afterAnUnlockThroughTheLockView_timesTheNewHold() {
    LockstepLockRegistry registry = new LockstepLockRegistry(zk.newClient(), zk.path("r"));
    LockstepLock lock = registry.obtain("orders");
    lock.lock(Duration.ofMinutes(5));
    lock.lockView().unlock();
    lock.lock(); // no time to live

    registry.renewLock("orders", Duration.ofMillis(200));

    await().pollInSameThread().until(() -> isLost(lock));
    assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
  }

  /**
   * An expired hold cleared through {@code lockView()} (which unlocks a lost hold silently): the
   * thread's next hold, without a time to live, is unlocked without an exception; it never expired.
   */
  @Test
  void unlock_afterAnExpiredHoldWasClearedThroughTheLockView_doesNotReportTheOldExpiry() {
    LockstepLock lock = new LockstepLockRegistry(zk.newClient(), zk.path("r")).obtain("orders");
    lock.lock(Duration.ofMillis(100));
    await().pollInSameThread().until(() -> isLost(lock));
    lock.lockView().unlock();
    lock.lock(); // no time to live

    lock.unlock(); // the new hold did not expire: no ConcurrentModificationException

    assertThat(lock.fencedLock().isAcquiredInThisProcess()).isFalse();
  }

  /** The four {@code executeLocked} forms of Spring's {@code LockRegistry}, on the key "orders". */
  private static <E extends Throwable>
      Iterable<Map.Entry<String, ThrowingCallable>> executeLockedForms(
          LockstepLockRegistry registry,
          CheckedRunnable<E> runnable,
          CheckedCallable<String, E> callable) {
    Map<String, ThrowingCallable> forms = new LinkedHashMap<>();
    forms.put("executeLocked(key, runnable)", () -> registry.executeLocked("orders", runnable));
    forms.put("executeLocked(key, callable)", () -> registry.executeLocked("orders", callable));
    forms.put(
        "executeLocked(key, wait, runnable)",
        () -> registry.executeLocked("orders", Duration.ofSeconds(10), runnable));
    forms.put(
        "executeLocked(key, wait, callable)",
        () -> registry.executeLocked("orders", Duration.ofSeconds(10), callable));
    return forms.entrySet();
  }

  private static boolean isLost(LockstepLock lock) {
    try {
      lock.fencedLock().checkHeld();
      return false;
    } catch (LockOwnershipLostException e) {
      return true;
    }
  }

  /**
   * A reentrant {@code lock(ttl)} that races the expiry (the timer found the deadline passed and is
   * expiring the hold) keeps the expiring deadline: the hold turns LOST, and its last unlock throws
   * {@code ConcurrentModificationException}, every time. Before, the re-entry put a fresh deadline
   * in its place, and the last unlock of the expired hold passed silently most of the time.
   */
  @Test
  void aReentryRacingTheExpiry_stillHasTheLastUnlockReportIt() {
    LockstepLock lock = new LockstepLockRegistry(zk.newClient(), zk.path("registry")).obtain("k");
    int silent = 0;
    for (int round = 0; round < 50; round++) {
      lock.lock(Duration.ofMillis(1));
      boolean lost = false;
      while (!lost) {
        try {
          lock.lock(Duration.ofMillis(1)); // re-entered, racing the expiry
          lock.unlock();
        } catch (LockOwnershipLostException expired) {
          lost = true;
        }
      }
      try {
        lock.unlock();
        silent++;
      } catch (ConcurrentModificationException expected) {
        // the expiry, reported
      }
    }
    assertThat(silent).as("expired holds whose last unlock passed silently, of 50").isZero();
  }
}

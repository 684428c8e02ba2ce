package io.lockstep.recipes.locks.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A downgrade (taking the read lock while holding the write lock) is a downgrade only while the
 * write hold is alive. Once the write hold is lost, another client may hold the write lock, and a
 * read node tied to the lost write node's sequence number would sort ahead of that writer and be
 * granted next to it. The read acquire must refuse with {@link LockOwnershipLostException} instead,
 * and no read node may be left without its write node.
 */
@Timeout(60)
class DowngradeAfterLossTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** How the write hold is lost. */
  enum Loss {
    /** An administrator deletes the write node. */
    NODE_DELETED,
    /** The holder's session expires on the server; the client reconnects in a new session. */
    SESSION_EXPIRED
  }

  /** A read acquire by the thread whose write hold was lost. */
  @FunctionalInterface
  private interface ReadAcquire {
    boolean acquire(ReadWriteMutex.ReadLock readLock) throws Exception;
  }

  // Breach 1: a downgrade after the write hold was lost was granted next to another writer.
  @ParameterizedTest
  @EnumSource(Loss.class)
  void readAcquire_afterTheWriteHoldWasLost_throwsOwnershipLostAndLeavesNoReadNode(Loss loss)
      throws Exception {
    downgradeAfterLoss(
        loss,
        readLock -> {
          readLock.acquire();
          return true;
        });
  }

  // Breach 1: a timed downgrade after the write hold was lost was granted next to another writer.
  @ParameterizedTest
  @EnumSource(Loss.class)
  void timedReadAcquire_afterTheWriteHoldWasLost_throwsOwnershipLostAndLeavesNoReadNode(Loss loss)
      throws Exception {
    downgradeAfterLoss(loss, readLock -> readLock.acquire(5, TimeUnit.SECONDS));
  }

  private static void downgradeAfterLoss(Loss loss, ReadAcquire readAcquire) throws Exception {
    CuratorFramework admin = zk.newClient();
    CuratorFramework client = zk.newClient();
    ReadWriteMutex lost = new ReadWriteMutex(client, zk.path("lock"));
    ReadWriteMutex other = new ReadWriteMutex(zk.newClient(), zk.path("lock"));
    List<LockState> states = new CopyOnWriteArrayList<>();
    lost.writeLock().getStateListenable().addListener(change -> states.add(change.state()));
    lost.writeLock().acquire();

    if (loss == Loss.NODE_DELETED) {
      for (String node : lost.writeLock().getParticipantNodes()) {
        admin.delete().forPath(node);
      }
    } else {
      Sessions.expire(client, zk.server().getConnectString());
    }
    await().until(() -> states.contains(LockState.LOST));
    assertThatThrownBy(lost.writeLock()::checkHeld).isInstanceOf(LockOwnershipLostException.class);

    try (LockThread otherThread = new LockThread("other-writer")) {
      otherThread.run(other.writeLock()::acquire).get(20, TimeUnit.SECONDS);
      assertThat(children(admin)).as("only the other writer's node").hasSize(1);

      boolean[] returned = {false};
      Throwable thrown = catchThrowable(() -> returned[0] = readAcquire.acquire(lost.readLock()));
      boolean granted = lost.readLock().isOwnedByCurrentThread();
      List<String> children = children(admin);
      if (granted) {
        lost.readLock().release();
      }

      SoftAssertions.assertSoftly(
          softly -> {
            softly
                .assertThat(granted || returned[0])
                .as("read lock granted while another client holds the write lock")
                .isFalse();
            softly
                .assertThat(thrown)
                .as("downgrade of a lost write hold")
                .isInstanceOf(LockOwnershipLostException.class);
            softly
                .assertThat(children)
                .as("lock nodes right after the refused downgrade: no read node without its writer")
                .noneMatch(name -> name.contains("__READ__"));
          });

      lost.writeLock().release(); // a lost hold: clears local state without throwing
      otherThread.run(other.writeLock()::release).get(10, TimeUnit.SECONDS);
    }
  }

  private static List<String> children(CuratorFramework admin) throws Exception {
    return admin.getChildren().forPath(zk.path("lock"));
  }
}

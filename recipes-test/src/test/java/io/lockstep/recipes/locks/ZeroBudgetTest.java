package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.testing.ZeroBudgetTry;
import io.lockstep.testing.ZooKeeperExtension;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A zero budget means "try once": one create and one read of the queue, and the lock if it is free.
 * That includes a revocable lock, whose grant needs one more read (to watch its own node for
 * revocation requests, as Curator's does).
 */
@Timeout(60)
class ZeroBudgetTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  // Breach 5: a revocable ReentrantMutex refused a free lock to a zero budget.
  @Test
  void zeroBudgetAcquire_ofAFreeRevocableLock_isGranted() throws Exception {
    ReentrantMutex lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    lock.makeRevocable(revoked -> {});

    ZeroBudgetTry.granted(
        "acquire(0) of a free revocable lock",
        () -> lock.acquire(0, TimeUnit.SECONDS),
        () -> lock.acquire(10, TimeUnit.SECONDS));

    assertThat(lock.isOwnedByCurrentThread()).isTrue();
    assertThat(lock.getParticipantNodes()).hasSize(1);
    lock.checkHeld();
    lock.release();
    assertThat(lock.getParticipantNodes()).isEmpty();
  }
}

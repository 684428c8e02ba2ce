package io.lockstep.recipes.micrometer;

import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockObserver;
import io.lockstep.recipes.locks.LockObservers;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.ZooKeeperExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A closed Curator client is kept by nothing of Lockstep's, whatever touched it after its close:
 * metrics or observations closed after the client (a context whose client was stopped first), or a
 * lock made on it. Each was seen by asking the client's engine again, which made it a new one, kept
 * for good: its close had come already.
 */
@Timeout(60)
class ClosedClientKeptNowhereTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void metricsAndObservations_closedAfterTheClient_keepNothingOfIt() {
    assertCollected(
        closedClient(
            client -> {
              LockstepMetrics metrics = new LockstepMetrics(client);
              metrics.bindTo(new SimpleMeterRegistry());
              LockstepObservations observations =
                  LockstepObservations.bind(client, ObservationRegistry.create());
              client.close();
              metrics.close();
              observations.close();
            }));
  }

  @Test
  void aLockMade_orObservers_askedOfAClosedClient_keepNothingOfIt() {
    assertCollected(
        closedClient(
            client -> {
              client.close();
              var unused = new ReentrantMutex(client, zk.path("lock"));
              LockObservers.of(client).addListener(new LockObserver() {});
            }));
  }

  @Test
  void aClientSeenOnlyThroughANamespace_closedWithNoLockLive_isNotKept_pastTheNextEngineAskedFor() {
    WeakReference<CuratorFramework> closed =
        closedClient(
            client -> {
              // No acquisition live: nothing polls the facade's client, and a facade hears no
              // close.
              var unused = new ReentrantMutex(client.usingNamespace("facade"), "/lock");
              client.close();
            });

    var unused = new ReentrantMutex(zk.newClient(), zk.path("lock")); // another client's engine

    assertCollected(closed);
  }

  /** A started client, used then closed by {@code use}, and dropped. */
  private static WeakReference<CuratorFramework> closedClient(Consumer<CuratorFramework> use) {
    CuratorFramework client =
        CuratorFrameworkFactory.newClient(zk.server().getConnectString(), new RetryOneTime(100));
    client.start();
    use.accept(client);
    return new WeakReference<>(client);
  }

  private static void assertCollected(WeakReference<CuratorFramework> client) {
    await("the closed client collected")
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              System.gc();
              return client.get() == null;
            });
  }
}

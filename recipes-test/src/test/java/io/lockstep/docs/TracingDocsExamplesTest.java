package io.lockstep.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.locks.LockObservers;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.micrometer.LockstepObservations;
import io.lockstep.testing.ZooKeeperExtension;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.listen.StandardListenerManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The examples of docs/tracing.md, run as shown (see {@link DocsExamplesTest} for the rules): the
 * observations of a client's locks, their parent, and the path put in their names.
 */
@Timeout(60)
class TracingDocsExamplesTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void tracing_aFilter_putsThePathInTheContextualName() throws Exception {
    TestObservationRegistry registry = TestObservationRegistry.create();
    CuratorFramework client = zk.newClient();
    LockstepObservations.bind(client, registry);
    String lockPath = zk.path("orders");

    // docs/tracing.md: the path in the span's name
    // import io.micrometer.common.KeyValue;
    // import io.micrometer.observation.ObservationRegistry;

    ObservationRegistry observationRegistry = registry; // docs: ... your registry
    observationRegistry
        .observationConfig()
        .observationFilter(
            context -> {
              KeyValue path = context.getHighCardinalityKeyValue("path");
              if (context.getName().startsWith("lockstep.") && path != null) {
                context.setContextualName(context.getContextualName() + " " + path.getValue());
              }
              return context;
            });
    // docs: end

    ReentrantMutex lock = new ReentrantMutex(client, lockPath);
    lock.acquire();
    lock.release();
    TestObservationRegistryAssert.assertThat(registry)
        .hasObservationWithNameEqualTo(LockstepObservations.ACQUIRE)
        .that()
        .hasContextualNameEqualTo("ReentrantMutex wait " + lockPath)
        .backToTestObservationRegistry()
        .hasObservationWithNameEqualTo(LockstepObservations.HOLD)
        .that()
        .hasContextualNameEqualTo("ReentrantMutex hold " + lockPath);
  }

  @Test
  void tracing_theWaitAndTheHold_areChildrenOfTheRequest() throws Exception {
    TestObservationRegistry observationRegistry = TestObservationRegistry.create();
    CuratorFramework client = zk.newClient();
    LockstepObservations.bind(client, observationRegistry);

    // docs/tracing.md: a request's wait and hold
    // import io.lockstep.recipes.locks.ReentrantMutex;
    // import io.micrometer.observation.Observation;

    ReentrantMutex lock = ordersLock(client); // docs: ... made with the observed client
    Observation request = Observation.start("orders.pay", observationRegistry);
    try (Observation.Scope scope = request.openScope()) {
      lock.acquire(); // a wait under request, then a hold under request
      try {
        // pay the order
      } finally {
        lock.release();
      }
    } finally {
      request.stop();
    }
    // docs: end

    TestObservationRegistryAssert.assertThat(observationRegistry)
        .hasObservationWithNameEqualTo(LockstepObservations.ACQUIRE)
        .that()
        .hasParentObservationEqualTo(request)
        .backToTestObservationRegistry()
        .hasObservationWithNameEqualTo(LockstepObservations.HOLD)
        .that()
        .hasParentObservationEqualTo(request)
        .hasBeenStopped();
  }

  @Test
  void tracing_bindByHand_andClose() throws Exception {
    TestObservationRegistry observationRegistry = TestObservationRegistry.create();

    // docs/tracing.md: bind by hand
    // import io.lockstep.recipes.micrometer.LockstepObservations;
    // import org.apache.curator.framework.CuratorFramework;

    CuratorFramework client = zk.newClient(); // docs: ... a started client
    LockstepObservations observations = LockstepObservations.bind(client, observationRegistry);
    // ... the client's locks are observed until:
    observations.close();
    // docs: end

    assertThat(observations.toString()).endsWith(", closed]");
    assertThat(((StandardListenerManager<?>) LockObservers.of(client)).size()).isZero();
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));
    lock.acquire();
    lock.release();
    TestObservationRegistryAssert.assertThat(observationRegistry).doesNotHaveAnyObservation();
  }

  private static ReentrantMutex ordersLock(CuratorFramework client) {
    return new ReentrantMutex(client, zk.path("orders"));
  }
}

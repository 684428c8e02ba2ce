package io.lockstep.recipes.micrometer;

import io.lockstep.testing.ZooKeeperExtension;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the tests of the forms' observations share: a real server, a client bound to a registry
 * whose only handler is an {@link ObservationLedger}, checked after each test to have stopped every
 * observation it started exactly once, and calls made under a "request" observation.
 */
abstract class ObservedFormsBase {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  final ObservationRegistry registry = ObservationRegistry.create();
  final ObservationLedger ledger = ObservationLedger.in(registry);
  CuratorFramework client;
  LockstepObservations observations;

  @BeforeEach
  void bind() {
    client = zk.newClient();
    observations = LockstepObservations.bind(client, registry);
  }

  @AfterEach
  void everyObservationStartedIsStoppedOnce() {
    ledger.assertEachStoppedOnce();
    observations.close();
  }

  /** Something done in the caller's thread, which may throw. */
  interface Call {
    void run() throws Exception;
  }

  /**
   * Runs {@code call} in the scope of a new observation {@code name}, stopped after; returns it.
   */
  Observation under(String name, Call call) throws Exception {
    Observation parent = Observation.start(name, registry);
    try (Observation.Scope scope = parent.openScope()) {
      call.run();
    } finally {
      parent.stop();
    }
    return parent;
  }

  /** Runs {@code call} in the scope of a new observation, "request", stopped after; returns it. */
  Observation underRequest(Call call) throws Exception {
    return under("request", call);
  }

  /** What {@code call} returns, called in the scope of a new observation named "request". */
  <T> T inRequest(Supplier<T> call) {
    AtomicReference<T> result = new AtomicReference<>();
    try {
      underRequest(() -> result.set(call.get()));
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return result.get();
  }
}

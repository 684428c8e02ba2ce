package io.lockstep.recipes.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockObservers;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.listen.StandardListenerManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The observations of a client's locks, in Micrometer's test registry, after scripted runs against
 * a real server: names, key values, parents, events, and what close leaves behind.
 */
@Timeout(90)
class LockstepObservationsTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final String MUTEX = "ReentrantMutex";

  @Test
  void aGrantedAcquire_isAWaitThenAHold_underTheCallersObservation() throws Exception {
    CuratorFramework client = zk.newClient();
    TestObservationRegistry registry = TestObservationRegistry.create();
    LockstepObservations.bind(client, registry);
    String path = zk.path("orders");
    ReentrantMutex lock = new ReentrantMutex(client, path);

    Observation request = Observation.start("request", registry);
    long token = acquireAndReleaseUnder(request, lock);

    TestObservationRegistryAssert.assertThat(registry)
        .hasNumberOfObservationsWithNameEqualTo(LockstepObservations.ACQUIRE, 1)
        .hasNumberOfObservationsWithNameEqualTo(LockstepObservations.HOLD, 1)
        .hasObservationWithNameEqualTo(LockstepObservations.ACQUIRE)
        .that()
        .hasContextualNameEqualTo(MUTEX + " wait")
        .hasLowCardinalityKeyValue("recipe", MUTEX)
        .hasLowCardinalityKeyValue("outcome", "GRANTED")
        .hasHighCardinalityKeyValue("path", path)
        .hasHighCardinalityKeyValue("token", Long.toString(token))
        .hasParentObservationEqualTo(request)
        .doesNotHaveError()
        .hasBeenStarted()
        .hasBeenStopped()
        .backToTestObservationRegistry()
        .hasObservationWithNameEqualTo(LockstepObservations.HOLD)
        .that()
        .hasContextualNameEqualTo(MUTEX + " hold")
        .hasLowCardinalityKeyValue("recipe", MUTEX)
        .hasLowCardinalityKeyValue("state", "RELEASED")
        .doesNotHaveLowCardinalityKeyValueWithKey("outcome")
        .hasHighCardinalityKeyValue("path", path)
        .hasHighCardinalityKeyValue("token", Long.toString(token))
        .hasParentObservationEqualTo(request)
        .hasBeenStarted()
        .hasBeenStopped();
  }

  @Test
  void withoutACurrentObservation_theWaitHasNoParent_andTheHoldIsItsChild() throws Exception {
    CuratorFramework client = zk.newClient();
    TestObservationRegistry registry = TestObservationRegistry.create();
    LockstepObservations.bind(client, registry);
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));

    lock.acquire();
    lock.release();

    TestObservationRegistryAssert.assertThat(registry)
        .hasObservationWithNameEqualTo(LockstepObservations.ACQUIRE)
        .that()
        .doesNotHaveParentObservation()
        .backToTestObservationRegistry()
        .hasObservationWithNameEqualTo(LockstepObservations.HOLD)
        .that()
        .hasParentObservationContextMatching(
            parent -> LockstepObservations.ACQUIRE.equals(parent.getName()), "the wait")
        .hasBeenStopped();
  }

  @Test
  void aTimedOutAttempt_isAWaitWithItsOutcome_andNoHold() throws Exception {
    CuratorFramework client = zk.newClient();
    TestObservationRegistry registry = TestObservationRegistry.create();
    LockstepObservations.bind(client, registry);
    ReentrantMutex other = new ReentrantMutex(zk.newClient(), zk.path("a")); // not observed
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));
    other.acquire();
    try {
      assertThat(lock.acquire(100, TimeUnit.MILLISECONDS)).isFalse();
    } finally {
      other.release();
    }

    await()
        .untilAsserted(
            () ->
                TestObservationRegistryAssert.assertThat(registry)
                    .hasObservationWithNameEqualTo(LockstepObservations.ACQUIRE)
                    .that()
                    .hasBeenStopped());
    TestObservationRegistryAssert.assertThat(registry)
        .hasNumberOfObservationsEqualTo(1)
        .hasObservationWithNameEqualTo(LockstepObservations.ACQUIRE)
        .that()
        .hasLowCardinalityKeyValue("outcome", "TIMED_OUT")
        .doesNotHaveHighCardinalityKeyValueWithKey("token");
  }

  @Test
  void anAsynchronousAcquire_isParentedByTheObservationCurrentWhereItWasCalled() throws Exception {
    CuratorFramework client = zk.newClient();
    TestObservationRegistry registry = TestObservationRegistry.create();
    LockstepObservations.bind(client, registry);
    ReentrantMutex other = new ReentrantMutex(zk.newClient(), zk.path("a"));
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));
    other.acquire();

    Observation request = Observation.start("request", registry);
    CompletableFuture<LockHold> pending;
    try (Observation.Scope scope = request.openScope()) {
      pending = lock.acquireAsync().toCompletableFuture();
    }
    request.stop(); // the request returned; the acquisition goes on
    await().until(() -> other.getParticipantNodes().size() == 2);
    other.release(); // granted now, on Lockstep's threads
    LockHold hold = pending.get(10, TimeUnit.SECONDS);
    hold.close();

    TestObservationRegistryAssert.assertThat(registry)
        .hasObservationWithNameEqualTo(LockstepObservations.ACQUIRE)
        .that()
        .hasParentObservationEqualTo(request)
        .hasLowCardinalityKeyValue("outcome", "GRANTED")
        .hasBeenStopped()
        .backToTestObservationRegistry()
        .hasObservationWithNameEqualTo(LockstepObservations.HOLD)
        .that()
        .hasParentObservationEqualTo(request)
        .hasLowCardinalityKeyValue("state", "RELEASED")
        .hasBeenStopped();
  }

  @Test
  void aHoldLostWithItsSession_showsTheLossAndStops_beforeItsRelease() throws Exception {
    CuratorFramework client = zk.newClient();
    TestObservationRegistry registry = TestObservationRegistry.create();
    LockstepObservations.bind(client, registry);
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));

    LockHold hold = lock.hold();
    Sessions.expire(client, zk.server().getConnectString());
    await().until(() -> hold.state() == LockState.LOST);

    await()
        .untilAsserted(
            () ->
                TestObservationRegistryAssert.assertThat(registry)
                    .hasObservationWithNameEqualTo(LockstepObservations.HOLD)
                    .that()
                    .hasBeenStopped());
    hold.close(); // the release of a lost hold changes nothing more
    TestObservationRegistryAssert.assertThat(registry)
        .hasNumberOfObservationsWithNameEqualTo(LockstepObservations.HOLD, 1)
        .hasObservationWithNameEqualTo(LockstepObservations.HOLD)
        .that()
        .hasEvent(LockstepObservations.AT_RISK_EVENT, "lock at risk")
        .hasEvent(LockstepObservations.LOST_EVENT, "lock lost")
        .hasLowCardinalityKeyValue("state", "LOST");
  }

  @Test
  void close_unregisters_stopsWhatIsUnderWay_andObservesNothingAfter() throws Exception {
    CuratorFramework client = zk.newClient();
    TestObservationRegistry registry = TestObservationRegistry.create();
    Journal journal = new Journal();
    registry.observationConfig().observationHandler(journal);
    LockstepObservations observations = LockstepObservations.bind(client, registry);
    assertThat(observers(client)).isEqualTo(1);
    ReentrantMutex held = new ReentrantMutex(client, zk.path("held"));
    ReentrantMutex other = new ReentrantMutex(zk.newClient(), zk.path("waited"));
    ReentrantMutex waited = new ReentrantMutex(client, zk.path("waited"));
    held.acquire();
    other.acquire();
    CompletableFuture<LockHold> pending = waited.acquireAsync().toCompletableFuture();
    await().until(() -> other.getParticipantNodes().size() == 2);

    observations.close();

    assertThat(observers(client)).isZero();
    assertThat(journal.entries)
        .containsExactlyInAnyOrder(
            "start lockstep.acquire",
            "stop lockstep.acquire GRANTED",
            "start lockstep.hold",
            "start lockstep.acquire",
            "stop lockstep.acquire UNKNOWN",
            "stop lockstep.hold HELD");
    assertThat(journal.entries)
        .containsSubsequence("start lockstep.hold", "stop lockstep.hold HELD")
        .containsSubsequence(
            "start lockstep.acquire", "start lockstep.acquire", "stop lockstep.acquire UNKNOWN");

    other.release();
    pending.get(10, TimeUnit.SECONDS).close();
    held.release();
    held.acquire();
    held.release();
    observations.close(); // again: nothing
    await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(5))
        .until(() -> journal.entries.size() == 6);
    TestObservationRegistryAssert.assertThat(registry).hasNumberOfObservationsEqualTo(3);
  }

  /** Each observation's start and stop, with the outcome or state it stopped with. */
  static final class Journal implements ObservationHandler<Observation.Context> {
    final List<String> entries = new CopyOnWriteArrayList<>();

    @Override
    public void onStart(Observation.Context context) {
      entries.add("start " + context.getName());
    }

    @Override
    public void onStop(Observation.Context context) {
      KeyValue outcome = context.getLowCardinalityKeyValue("outcome");
      KeyValue state = context.getLowCardinalityKeyValue("state");
      entries.add(
          "stop "
              + context.getName()
              + " "
              + (outcome != null ? outcome.getValue() : state.getValue()));
    }

    @Override
    public boolean supportsContext(Observation.Context context) {
      return true;
    }
  }

  /**
   * The cost side: an unbound client has no observer, and a bound one sends ZooKeeper the same
   * requests per acquire and release (3) as an unbound one.
   */
  @Test
  void nothingIsRegisteredUnlessBound_andABoundClientSendsTheSameRequests() throws Exception {
    CuratorFramework unbound = zk.newClient();
    CuratorFramework bound = zk.newClient();
    TestObservationRegistry registry = TestObservationRegistry.create();
    LockstepObservations.bind(bound, registry);
    assertThat(observers(unbound)).isZero();
    assertThat(observers(bound)).isEqualTo(1);

    int cycles = 10;
    long unboundRequests = requestsOfCycles(unbound, "unbound", cycles);
    long boundRequests = requestsOfCycles(bound, "bound", cycles);

    assertThat(unboundRequests).isEqualTo(3L * cycles);
    assertThat(boundRequests).isEqualTo(unboundRequests);
    TestObservationRegistryAssert.assertThat(registry)
        .hasNumberOfObservationsWithNameEqualTo(LockstepObservations.ACQUIRE, cycles)
        .hasNumberOfObservationsWithNameEqualTo(LockstepObservations.HOLD, cycles);
  }

  @Test
  void aNoopRegistry_keepsNothing_andBadInputIsRefusedNamingTheArgument() throws Exception {
    CuratorFramework client = zk.newClient();
    try (LockstepObservations observations =
        LockstepObservations.bind(client, ObservationRegistry.NOOP)) {
      ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));
      lock.acquire();
      lock.release();
      assertThat(observations.toString()).startsWith("LockstepObservations[");
    }
    assertThatThrownBy(() -> LockstepObservations.bind(null, ObservationRegistry.NOOP))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("client");
    assertThatThrownBy(() -> LockstepObservations.bind(client, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("registry");
    assertThat(observers(client)).isZero();
  }

  /** What docs/tracing.md says a metrics handler makes of them: timers tagged by the low keys. */
  @Test
  void aMeterHandler_timesTheWaitsAndHolds_taggedByTheLowCardinalityKeys() throws Exception {
    CuratorFramework client = zk.newClient();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    ObservationRegistry registry = ObservationRegistry.create();
    registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
    LockstepObservations.bind(client, registry);
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));

    lock.acquire();
    lock.release();

    assertThat(
            meters
                .get(LockstepObservations.ACQUIRE)
                .tags("recipe", MUTEX, "outcome", "GRANTED")
                .timer()
                .count())
        .isEqualTo(1);
    assertThat(
            meters
                .get(LockstepObservations.HOLD)
                .tags("recipe", MUTEX, "state", "RELEASED")
                .timer())
        .satisfies(timer -> assertThat(timer.count()).isEqualTo(1));
    assertThat(meters.getMeters())
        .as("no path or token tag")
        .allSatisfy(
            meter -> {
              assertThat(meter.getId().getTag("path")).isNull();
              assertThat(meter.getId().getTag("token")).isNull();
            });
  }

  @Test
  void aReentrantAcquire_isNoAttempt() throws Exception {
    CuratorFramework client = zk.newClient();
    TestObservationRegistry registry = TestObservationRegistry.create();
    LockstepObservations.bind(client, registry);
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("a"));

    lock.acquire();
    lock.acquire();
    lock.release();
    lock.release();

    TestObservationRegistryAssert.assertThat(registry)
        .hasNumberOfObservationsWithNameEqualTo(LockstepObservations.ACQUIRE, 1)
        .hasNumberOfObservationsWithNameEqualTo(LockstepObservations.HOLD, 1);
  }

  /**
   * Regression: with the waits turned off by a predicate (to keep only the holds), no hold was
   * observed either, as the hold was only begun from an observed wait.
   */
  @Test
  void aPredicateThatTurnsOffTheWaits_stillObservesTheHolds() throws Exception {
    CuratorFramework client = zk.newClient();
    TestObservationRegistry registry = TestObservationRegistry.create();
    registry
        .observationConfig()
        .observationPredicate((name, context) -> !name.equals(LockstepObservations.ACQUIRE));
    LockstepObservations.bind(client, registry);
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("holds-only"));

    Observation request = Observation.start("request", registry);
    acquireAndReleaseUnder(request, lock);

    TestObservationRegistryAssert.assertThat(registry)
        .hasNumberOfObservationsWithNameEqualTo(LockstepObservations.ACQUIRE, 0)
        .hasNumberOfObservationsWithNameEqualTo(LockstepObservations.HOLD, 1)
        .forAllObservationsWithNameEqualTo(
            LockstepObservations.HOLD,
            hold ->
                hold.hasLowCardinalityKeyValue("state", "RELEASED")
                    .hasParentObservationEqualTo(request));
  }

  /**
   * Regression: a handler that threw in {@code onStart} left the observation started for the
   * handlers before it (a tracer's span), and it was never stopped.
   */
  @Test
  void aHandlerThatThrowsOnStart_leavesNoObservationOpen() throws Exception {
    Journal journal = new Journal();

    acquireAndRelease(journal, new ThrowingOnStart()); // started after the journal

    assertThat(journal.entries).containsExactlyElementsOf(ONE_HOLD);
  }

  /**
   * Regression: a handler that threw in the wait's {@code onStop} cost the hold its observation.
   */
  @Test
  void aHandlerThatThrowsOnTheWaitsStop_stillObservesTheHold() throws Exception {
    Journal journal = new Journal();

    // stopped after the journal: handlers stop in reverse order
    acquireAndRelease(new ThrowingOnStop(LockstepObservations.ACQUIRE, 1), journal);

    assertThat(journal.entries).containsExactlyElementsOf(ONE_HOLD);
  }

  /** The journal of one acquire and release, observed without failure. */
  private static final List<String> ONE_HOLD =
      List.of(
          "start lockstep.acquire",
          "stop lockstep.acquire GRANTED",
          "start lockstep.hold",
          "stop lockstep.hold RELEASED");

  /** Acquires and releases a lock of a client bound to a registry with {@code handlers}. */
  @SafeVarargs
  private static void acquireAndRelease(ObservationHandler<Observation.Context>... handlers)
      throws Exception {
    CuratorFramework client = zk.newClient();
    TestObservationRegistry registry = TestObservationRegistry.create();
    for (ObservationHandler<Observation.Context> handler : handlers) {
      registry.observationConfig().observationHandler(handler);
    }
    LockstepObservations.bind(client, registry);
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("throwing"));
    lock.acquire();
    lock.release();
  }

  /**
   * Regression: close() gave up at the first observation a handler failed to stop, and left every
   * other hold and wait under way open for good.
   */
  @Test
  void close_whenAHandlerThrowsOnAStop_stillStopsEveryOther() throws Exception {
    CuratorFramework client = zk.newClient();
    TestObservationRegistry registry = TestObservationRegistry.create();
    registry
        .observationConfig()
        .observationHandler(new ThrowingOnStop(LockstepObservations.HOLD, 1));
    Journal journal = new Journal();
    registry.observationConfig().observationHandler(journal);
    LockstepObservations observations = LockstepObservations.bind(client, registry);
    ReentrantMutex first = new ReentrantMutex(client, zk.path("first"));
    ReentrantMutex second = new ReentrantMutex(client, zk.path("second"));
    first.acquire();
    second.acquire();

    assertThatThrownBy(observations::close).hasMessage("a failing handler");

    assertThat(journal.entries).filteredOn("stop lockstep.hold HELD"::equals).hasSize(2);
    first.release();
    second.release();
  }

  /**
   * A handler that fails the first {@code failures} stops of the observations named {@code name}.
   */
  static final class ThrowingOnStop implements ObservationHandler<Observation.Context> {
    private final String name;
    private final AtomicInteger failures;

    ThrowingOnStop(String name, int failures) {
      this.name = name;
      this.failures = new AtomicInteger(failures);
    }

    @Override
    public void onStop(Observation.Context context) {
      if (context.getName().equals(name) && failures.getAndDecrement() > 0) {
        throw new IllegalStateException("a failing handler");
      }
    }

    @Override
    public boolean supportsContext(Observation.Context context) {
      return true;
    }
  }

  /** A handler that fails every start. */
  static final class ThrowingOnStart implements ObservationHandler<Observation.Context> {
    @Override
    public void onStart(Observation.Context context) {
      throw new IllegalStateException("a failing handler");
    }

    @Override
    public boolean supportsContext(Observation.Context context) {
      return true;
    }
  }

  /**
   * Acquires and releases {@code lock} in the scope of {@code request}, then stops it; returns the
   * hold's fencing token.
   */
  private static long acquireAndReleaseUnder(Observation request, ReentrantMutex lock)
      throws Exception {
    try (Observation.Scope scope = request.openScope()) {
      lock.acquire();
      long token = lock.fencingToken();
      lock.release();
      return token;
    } finally {
      request.stop();
    }
  }

  private static long requestsOfCycles(CuratorFramework client, String name, int cycles)
      throws Exception {
    String path = zk.path(name);
    // a persistent directory: the container reaper must not remove it between cycles
    client.create().creatingParentsIfNeeded().forPath(path);
    ReentrantMutex lock = new ReentrantMutex(client, path);
    long before = zk.requestsSoFar(client);
    for (int i = 0; i < cycles; i++) {
      lock.acquire();
      lock.release();
    }
    return zk.requestsSoFar(client) - before;
  }

  /** The observers registered for every lock of {@code client}. */
  private static int observers(CuratorFramework client) {
    return ((StandardListenerManager<?>) LockObservers.of(client)).size();
  }
}

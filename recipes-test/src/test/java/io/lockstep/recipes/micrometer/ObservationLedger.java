package io.lockstep.recipes.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A handler that keeps every observation it saw start and every stop, by context: the tests read
 * the lock observations' parents and keys from it, and check that each one started was stopped
 * exactly once and none stopped unstarted.
 */
final class ObservationLedger implements ObservationHandler<Observation.Context> {
  private final List<Observation.Context> started = new CopyOnWriteArrayList<>();
  private final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

  /** A registry whose only handler is a new ledger. */
  static ObservationLedger in(ObservationRegistry registry) {
    ObservationLedger ledger = new ObservationLedger();
    registry.observationConfig().observationHandler(ledger);
    return ledger;
  }

  @Override
  public void onStart(Observation.Context context) {
    started.add(context);
  }

  @Override
  public void onStop(Observation.Context context) {
    stopped.add(context);
  }

  @Override
  public boolean supportsContext(Observation.Context context) {
    return true;
  }

  /** The observations started with {@code name}, in the order they started. */
  List<Observation.Context> named(String name) {
    return started.stream().filter(c -> c.getName().equals(name)).toList();
  }

  /** The lock observations' waits. */
  List<Observation.Context> waits() {
    return named(LockstepObservations.ACQUIRE);
  }

  /** The lock observations' holds. */
  List<Observation.Context> holds() {
    return named(LockstepObservations.HOLD);
  }

  /** Waits until {@code count} waits were stopped; then each had its outcome. */
  List<String> outcomesOnceStopped(int count) {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> stoppedNamed(LockstepObservations.ACQUIRE) >= count);
    return waits().stream().map(c -> low(c, "outcome")).toList();
  }

  /** Whether {@code context} has been stopped. */
  boolean isStopped(Observation.Context context) {
    return stopped.stream().anyMatch(c -> c == context);
  }

  private long stoppedNamed(String name) {
    return stopped.stream().filter(c -> c.getName().equals(name)).count();
  }

  /** Every lock observation started, waits and holds, has {@code parent} as its parent. */
  void assertAllUnder(Observation parent, int waits, int holds) {
    assertThat(waits()).as("waits").hasSize(waits);
    assertThat(holds()).as("holds").hasSize(holds);
    assertThat(lockObservations())
        .allSatisfy(
            context ->
                assertThat(context.getParentObservation())
                    .as("the parent of %s %s", context.getName(), context.getContextualName())
                    .isSameAs(parent));
  }

  /** The names of the parents of the observations named {@code name}, in start order. */
  List<String> parentsOf(String name) {
    return named(name).stream()
        .map(c -> c.getParentObservation() == null ? "none" : parentName(c))
        .toList();
  }

  private static String parentName(Observation.Context context) {
    return context.getParentObservation().getContextView().getName();
  }

  private List<Observation.Context> lockObservations() {
    return started.stream().filter(c -> c.getName().startsWith("lockstep.")).toList();
  }

  /**
   * Waits until every observation started has been stopped, then checks each was stopped exactly
   * once and that nothing was stopped that had not started.
   */
  void assertEachStoppedOnce() {
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> assertThat(stopped).as("stopped").hasSameSizeAs(started).hasSize(started.size()));
    Map<Observation.Context, Integer> stops = new IdentityHashMap<>();
    stopped.forEach(c -> stops.merge(c, 1, Integer::sum));
    for (Observation.Context context : started) {
      assertThat(stops.remove(context))
          .as("stops of %s %s", context.getName(), context.getContextualName())
          .isEqualTo(1);
    }
    assertThat(stops).as("stopped without a start").isEmpty();
  }

  /** A low-cardinality value, or null. */
  static String low(Observation.Context context, String key) {
    KeyValue value = context.getLowCardinalityKeyValue(key);
    return value == null ? null : value.getValue();
  }

  /** A high-cardinality value, or null. */
  static String high(Observation.Context context, String key) {
    KeyValue value = context.getHighCardinalityKeyValue(key);
    return value == null ? null : value.getValue();
  }
}

package io.lockstep.recipes.boot;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.lockstep.recipes.spring.LockedSkips;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * The meter {@value #SKIPS} of one context's {@link LockedSkips}, in every registry bound: one
 * listener on the skips from the first binding until {@link #close()}, however many registries are
 * bound and however often (Spring Boot binds every {@code MeterBinder} bean again, to each registry
 * it binds).
 */
final class LockedSkipMeters implements MeterBinder, AutoCloseable {
  /** The name of the meter of skipped {@code @Locked} calls. */
  static final String SKIPS = "lockstep.locked.skips";

  private final Supplier<LockedSkips> source; // read at the first binding; null: nothing to count
  private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>(); // read lock-free
  private final LockedSkips.Listener listener = (method, key) -> registerEverywhere(method);
  private final Object bindings = new Object(); // guards binding and closing

  /** The skips listened to; set once, at the first binding that found them. */
  private volatile LockedSkips skips;

  @GuardedBy("bindings")
  private boolean closed; // terminal: no more binding, no listener

  /**
   * @param source the skips to count, looked up at the first binding; it may return null (no post
   *     processor of {@code @Locked} methods), and then the binding does nothing
   */
  LockedSkipMeters(Supplier<LockedSkips> source) {
    this.source = source;
  }

  /**
   * Registers the counters of the methods skipped so far in {@code registry}, and from now on those
   * of the methods skipped first later; listens to the skips from the first binding. Binding to a
   * registry already bound, or after {@link #close()}, does nothing.
   */
  @Override
  public void bindTo(MeterRegistry registry) {
    Objects.requireNonNull(registry, "registry");
    synchronized (bindings) {
      if (closed || registries.contains(registry)) {
        return;
      }
      LockedSkips counted = skips;
      if (counted == null) {
        counted = source.get();
        if (counted == null) {
          return;
        }
        skips = counted;
        counted.addListener(listener);
      }
      registries.add(registry); // before reading the methods: a skip after is heard or read
      for (String method : counted.byMethod().keySet()) {
        register(counted, method, registry);
      }
    }
  }

  /** Stops listening to the skips; the counters stay in their registries. Again does nothing. */
  @Override
  public void close() {
    synchronized (bindings) {
      closed = true;
      LockedSkips counted = skips;
      if (counted != null) {
        counted.removeListener(listener);
      }
      registries.clear();
    }
  }

  private void registerEverywhere(String method) {
    LockedSkips counted = skips;
    for (MeterRegistry registry : registries) {
      register(counted, method, registry);
    }
  }

  /** The skip counter of {@code method}; registering it again returns the one registered. */
  private static void register(LockedSkips skips, String method, MeterRegistry registry) {
    FunctionCounter.builder(SKIPS, skips, s -> s.count(method))
        .description("@Locked calls skipped: the lock was not granted within the budget")
        .tag("method", method)
        .register(registry);
  }

  @Override
  public String toString() {
    return "LockedSkipMeters[" + registries.size() + " registries]";
  }
}

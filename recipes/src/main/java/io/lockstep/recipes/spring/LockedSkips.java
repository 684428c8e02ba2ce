package io.lockstep.recipes.spring;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Locked} calls of one context that were skipped because the lock was not granted within
 * the budget ({@link Locked.WhenBusy#SKIP}): another holder had it, or, rarely, the server did not
 * answer the first try in time. Counted per method: {@link LockedBeanPostProcessor#skips()}. With
 * Spring Boot and Micrometer, the counts are also the meter {@code lockstep.locked.skips}, tagged
 * with the method.
 *
 * <pre>{@code
 * import io.lockstep.recipes.spring.LockedBeanPostProcessor;
 * import io.lockstep.recipes.spring.LockedSkips;
 * import org.springframework.context.ApplicationContext;
 *
 * ApplicationContext context = ...; // the application's context
 * LockedSkips skips = context.getBean(LockedBeanPostProcessor.class).skips();
 * long reportsSkipped = skips.count("DailyReport.publish");
 * }</pre>
 */
public final class LockedSkips {
  private static final Logger log = LoggerFactory.getLogger(LockedSkips.class);

  private final ConcurrentMap<String, LongAdder> byMethod = new ConcurrentHashMap<>();
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();

  /** Hears each skipped call. */
  @FunctionalInterface
  public interface Listener {
    /**
     * A call was skipped. Called in the calling thread, after the skip was counted: keep it short.
     * An exception it throws is logged and does not reach the caller.
     *
     * @param method the method, as {@code SimpleClassName.method}
     * @param key the key whose lock was held elsewhere
     */
    void skipped(String method, String key);
  }

  LockedSkips() {}

  /**
   * The calls skipped so far, of every method.
   *
   * @return the count
   */
  public long total() {
    long total = 0;
    for (LongAdder count : byMethod.values()) {
      total += count.sum();
    }
    return total;
  }

  /**
   * The calls of {@code method} skipped so far.
   *
   * @param method the method, as {@code SimpleClassName.method} ({@code "DailyReport.publish"})
   * @return the count; 0 for a method never skipped
   * @throws NullPointerException if {@code method} is null
   */
  public long count(String method) {
    LongAdder count = byMethod.get(Objects.requireNonNull(method, "method"));
    return count == null ? 0 : count.sum();
  }

  /**
   * The counts of the methods skipped so far, by method, in name order.
   *
   * @return a snapshot
   */
  public Map<String, Long> byMethod() {
    Map<String, Long> snapshot = new TreeMap<>();
    byMethod.forEach((method, count) -> snapshot.put(method, count.sum()));
    return snapshot;
  }

  /**
   * Adds a listener that hears each skip from now on.
   *
   * @param listener the listener
   * @throws NullPointerException if {@code listener} is null
   */
  public void addListener(Listener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /**
   * Removes a listener added before; nothing happens if it was not.
   *
   * @param listener the listener
   */
  public void removeListener(Listener listener) {
    listeners.remove(listener);
  }

  /** How many listeners are registered now: for tests. */
  int listenerCount() {
    return listeners.size();
  }

  /** A call of {@code method} on {@code key} was skipped. */
  void skipped(String method, String key) {
    byMethod.computeIfAbsent(method, m -> new LongAdder()).increment();
    for (Listener listener : listeners) {
      try {
        listener.skipped(method, key);
      } catch (RuntimeException e) {
        log.warn("A listener of skipped @Locked calls failed on {}", method, e);
      }
    }
  }
}

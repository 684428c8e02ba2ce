package io.lockstep.recipes.internal.engine;

import java.lang.ref.WeakReference;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the caller's thread had current when it called a form of acquiring that starts some of its
 * attempts later, on another thread: the composed multi-lock's asynchronous acquire starts each
 * lock's attempt once the one before it is granted; a semaphore's request for several leases (or
 * one that queues) starts each lease after the last one's verdict. An observer that reads the
 * acquiring thread in {@code attemptStarted} (the Micrometer binder, for the parent observation)
 * registers a {@link Source}; such a form captures every source in the caller's thread, starts its
 * later attempts carrying the capture, and the observer reads it back with {@link
 * #carried(Source)}. With no source registered a capture is empty and costs a check. Sources are
 * held weakly: the binder's lives as long as its client's observers hold it.
 */
public final class CallerContext {
  private static final Logger log = LoggerFactory.getLogger(CallerContext.class);

  /** What carries nothing. */
  private static final CallerContext NONE = new CallerContext(Map.of());

  // Weakly: a binding never closed goes with its client, not kept here for good.
  private static final List<WeakReference<Source>> sources = new CopyOnWriteArrayList<>();
  private static final ThreadLocal<Map<Source, Object>> carriedHere = new ThreadLocal<>();

  /** Something of the calling thread's that an observer reads. */
  public interface Source {
    /**
     * Reads it in the calling thread.
     *
     * @return the value, or null for none
     */
    Object read();
  }

  private final Map<Source, Object> values;

  private CallerContext(Map<Source, Object> values) {
    this.values = values;
  }

  /**
   * Captures {@code source} from now on, until unregistered.
   *
   * @param source what to read
   */
  public static void register(Source source) {
    sources.removeIf(ref -> ref.get() == null);
    sources.add(new WeakReference<>(source));
  }

  /**
   * Stops capturing {@code source}.
   *
   * @param source what was registered
   */
  public static void unregister(Source source) {
    sources.removeIf(ref -> ref.get() == null || ref.get() == source);
  }

  /**
   * Reads every source in this thread: what a carried value says for a source, if this thread
   * carries one (a form started from another form's later attempt), else the source itself.
   *
   * @return the capture, to carry to the attempts started later
   */
  public static CallerContext capture() {
    if (sources.isEmpty()) {
      return NONE;
    }
    Map<Source, Object> captured = new IdentityHashMap<>();
    for (WeakReference<Source> ref : sources) {
      Source source = ref.get();
      if (source == null) {
        continue;
      }
      Object value = carried(source);
      if (value == null) {
        try {
          value = source.read();
        } catch (RuntimeException e) {
          log.warn("Could not read the caller's context from {}", source, e);
        }
      }
      if (value != null) {
        captured.put(source, value);
      }
    }
    return captured.isEmpty() ? NONE : new CallerContext(captured);
  }

  /**
   * Calls {@code call} in this thread carrying this capture, then carries what it carried before.
   *
   * @param call what starts an attempt
   * @return what it returned
   * @param <T> its result
   */
  public <T> T carry(Supplier<T> call) {
    if (values.isEmpty()) {
      return call.get();
    }
    Map<Source, Object> before = carriedHere.get();
    carriedHere.set(values);
    try {
      return call.get();
    } finally {
      if (before == null) {
        carriedHere.remove();
      } else {
        carriedHere.set(before);
      }
    }
  }

  /**
   * {@code task}, to run on another thread carrying what this thread carries now: an attempt
   * started on ZooKeeper's event thread tells observers of its start from the notifier's thread.
   *
   * @param task what to run
   * @return {@code task} itself if this thread carries nothing
   */
  public static Runnable carryingHere(Runnable task) {
    Map<Source, Object> here = carriedHere.get();
    if (here == null) {
      return task;
    }
    CallerContext carried = new CallerContext(here);
    return () ->
        carried.carry(
            () -> {
              task.run();
              return null;
            });
  }

  /**
   * What the thread carries for {@code source}: read in the caller's thread of the form that
   * started the attempt under way in this thread.
   *
   * @param source a registered source
   * @return the value, or null if this thread carries none for it
   */
  public static Object carried(Source source) {
    Map<Source, Object> here = carriedHere.get();
    return here == null ? null : here.get(source);
  }
}

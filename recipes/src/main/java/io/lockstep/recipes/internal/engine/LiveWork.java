package io.lockstep.recipes.internal.engine;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The work an object started and that has not ended yet (a lock object's attempts not granted, a
 * semaphore's waiting requests), so that the object's close can end it: each piece is ended with
 * the object's "closed" failure, which its caller then gets (a grant that won the race is kept).
 * Work started while the object closes is ended at once.
 *
 * @param <T> the work
 */
public final class LiveWork<T> implements Consumer<T> {
  private final SlimMap<T, T> live = new SlimMap<>(); // nothing kept while nothing is under way
  private final BiConsumer<T, RuntimeException> end;
  private final Supplier<RuntimeException> closedFailure;

  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<LiveWork> CLOSED =
      AtomicIntegerFieldUpdater.newUpdater(LiveWork.class, "closed");

  private volatile int closed; // 1 once the object closed: a field, not an object (per key)

  /**
   * @param end ends a piece of work with the failure its caller gets
   * @param closedFailure the object's "closed" failure, a new one each time
   */
  public LiveWork(BiConsumer<T, RuntimeException> end, Supplier<RuntimeException> closedFailure) {
    this.end = end;
    this.closedFailure = closedFailure;
  }

  /** Throws the "closed" failure if {@link #closeAll} was called. */
  public void checkOpen() {
    if (closed != 0) {
      throw closedFailure.get();
    }
  }

  /**
   * Keeps {@code work} until {@code done} completes; ends it at once if the object closed
   * meanwhile.
   *
   * @return {@code work}
   */
  public T track(T work, CompletableFuture<?> done) {
    live.put(work, work);
    var unused = done.whenComplete((v, f) -> live.remove(work));
    return endIfClosed(work);
  }

  /**
   * Keeps {@code work} until it is {@linkplain #accept done}, told by the work itself (an attempt's
   * lifecycle tells this tracker when it settles: no stage per attempt); ends it at once if the
   * object closed meanwhile.
   */
  T track(T work) {
    live.put(work, work);
    return endIfClosed(work);
  }

  /** {@code work}, tracked by {@link #track(Object)}, is done: the close no longer ends it. */
  @Override
  public void accept(T work) {
    live.remove(work);
  }

  /** Ends {@code work} at once if the object closed while it started. */
  private T endIfClosed(T work) {
    if (closed != 0) {
      end.accept(work, closedFailure.get());
    }
    return work;
  }

  /**
   * The object closed: no work starts from now on, and every piece still live is ended. Idempotent.
   *
   * @return true for the first call, false if the object had closed already
   */
  public boolean closeAll() {
    if (!CLOSED.compareAndSet(this, 0, 1)) {
      return false;
    }
    for (T work : live.values()) {
      end.accept(work, closedFailure.get());
    }
    return true;
  }
}

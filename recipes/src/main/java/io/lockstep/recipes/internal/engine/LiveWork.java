package io.lockstep.recipes.internal.engine;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
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
  private final Set<T> live = ConcurrentHashMap.newKeySet();
  private final BiConsumer<T, RuntimeException> end;
  private final Supplier<RuntimeException> closedFailure;
  private volatile boolean closed;

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
    if (closed) {
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
    live.add(work);
    var unused = done.whenComplete((v, f) -> live.remove(work));
    return endIfClosed(work);
  }

  /**
   * Keeps {@code work} until it is {@linkplain #accept done}, told by the work itself (an attempt's
   * lifecycle tells this tracker when it settles: no stage per attempt); ends it at once if the
   * object closed meanwhile.
   */
  T track(T work) {
    live.add(work);
    return endIfClosed(work);
  }

  /** {@code work}, tracked by {@link #track(Object)}, is done: the close no longer ends it. */
  @Override
  public void accept(T work) {
    live.remove(work);
  }

  /** Ends {@code work} at once if the object closed while it started. */
  private T endIfClosed(T work) {
    if (closed) {
      end.accept(work, closedFailure.get());
    }
    return work;
  }

  /** The object closed: no work starts from now on, and every piece still live is ended. */
  public void closeAll() {
    closed = true;
    for (T work : live) {
      end.accept(work, closedFailure.get());
    }
  }
}

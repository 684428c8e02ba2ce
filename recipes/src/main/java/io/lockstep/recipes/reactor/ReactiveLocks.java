package io.lockstep.recipes.reactor;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Lockstep's locks for Project Reactor: a {@link LockHold} as a {@link Mono}, and work run under a
 * lock that is released however the work ends and cancelled if the lock is lost.
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.FencedLock;
 * import io.lockstep.recipes.reactor.ReactiveLocks;
 * import reactor.core.publisher.Flux;
 * import reactor.core.publisher.Mono;
 *
 * FencedLock lock = ...; // any of Lockstep's locks
 * FencedStore store = ...; // your store: refuses stale tokens (docs/getting-started.md)
 * Flux<Long> written =
 *     ReactiveLocks.withLock(
 *         lock,
 *         hold ->
 *             Mono.fromCallable(
 *                 () -> {
 *                   store.write("order-17", "paid", hold.fencingToken());
 *                   return hold.fencingToken();
 *                 }));
 * }</pre>
 *
 * <p><b>Waiting.</b> Acquiring parks no thread: it is {@link FencedLock#acquireAsync()}, started on
 * subscription. Cancelling the subscription while it waits withdraws the attempt (its node is
 * deleted); a hold granted at the same moment is closed, never leaked. {@link #withLock} starts the
 * body on {@link Schedulers#boundedElastic()}, so a body that blocks never holds up Lockstep's own
 * threads, which deliver every lock's grants and timers.
 *
 * <p><b>Releasing.</b> {@link LockHold#close()} waits up to the client's connection timeout for the
 * delete of the lock node, so the holds these methods close are closed on {@link
 * Schedulers#boundedElastic()}, never on the thread that completed or cancelled the work (which may
 * be a non-blocking one).
 *
 * <p><b>Loss.</b> Work run by {@link #withLock} is cancelled, and the {@code Flux} fails with
 * {@link LockOwnershipLostException}, when the hold is lost ({@link LockHold#whenLost()}): session
 * expired, node deleted, client closed. The signal comes on one of Lockstep's threads, never on
 * ZooKeeper's event thread. As with any distributed lock, work already sent elsewhere may still
 * land: fence it with {@link LockHold#fencingToken()}.
 */
public final class ReactiveLocks {
  private ReactiveLocks() {}

  /**
   * A hold of {@code lock}, acquired when subscribed to, waiting as long as it takes. The
   * subscriber owns the hold and must close it; cancelling before the grant withdraws the attempt.
   * An operator put after this {@code Mono} that drops a value when cancelled ({@code publishOn},
   * for one, drops a hold it has not yet delivered, unseen by discard hooks) drops the hold
   * unclosed: schedule the work inside {@link #withLock}'s body instead.
   *
   * @param lock the lock to acquire
   * @return a {@code Mono} of the hold; it fails with {@link
   *     io.lockstep.recipes.locks.LockException} if ZooKeeper fails beyond the client's retry
   *     policy
   * @throws NullPointerException if {@code lock} is null
   */
  public static Mono<LockHold> hold(FencedLock lock) {
    Objects.requireNonNull(lock, "lock");
    return hold(() -> lock.acquireAsync().toCompletableFuture());
  }

  /**
   * A hold of {@code lock}, acquired when subscribed to, within {@code wait}: the {@code Mono}
   * fails with a {@link java.util.concurrent.TimeoutException} (or {@link
   * io.lockstep.recipes.locks.LockUnreachableException}) when it runs out, as {@link
   * FencedLock#acquireAsync(Duration)} does.
   *
   * @param lock the lock to acquire
   * @param wait the longest time to wait, not negative
   * @return a {@code Mono} of the hold
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code wait} is negative
   */
  public static Mono<LockHold> hold(FencedLock lock, Duration wait) {
    Objects.requireNonNull(lock, "lock");
    Objects.requireNonNull(wait, "wait");
    if (wait.isNegative()) {
      throw new IllegalArgumentException("wait must not be negative: " + wait);
    }
    return hold(() -> lock.acquireAsync(wait).toCompletableFuture());
  }

  /**
   * Runs {@code body} under {@code lock}: acquires a hold when subscribed to (waiting as long as it
   * takes), subscribes to the body's publisher, and closes the hold when the body completes, fails
   * or is cancelled (if the body failed and the close fails too, the subscriber gets the body's
   * error, the close's suppressed in it). If the hold is lost meanwhile, the body is cancelled and
   * the result fails with the {@link LockOwnershipLostException}. The loss and the body's end are
   * told in the order they reach this method: a loss told before the body's completion fails the
   * result (the body was cancelled, and a completion after that is not seen; at the very same
   * moment the result may fail, never wrongly complete); a body that completed or failed first
   * keeps its outcome, and a loss while its hold closes changes nothing. A body not yet started
   * when the loss is told is never started. The body may close the hold itself once it no longer
   * needs the lock: that is no loss, and the body runs on.
   *
   * @param lock the lock to hold while the body runs
   * @param body makes the work, given the hold (for its fencing token)
   * @param <T> what the work emits
   * @return the body's signals, under the lock
   * @throws NullPointerException if an argument is null
   */
  public static <T> Flux<T> withLock(
      FencedLock lock, Function<? super LockHold, ? extends Publisher<T>> body) {
    Objects.requireNonNull(body, "body");
    return Flux.usingWhen(
        hold(lock),
        // The body is the caller's work, which may block: it is made and subscribed to on
        // boundedElastic, never on the Lockstep thread that delivered the grant (a small pool every
        // lock of the JVM shares). The hold itself goes to usingWhen with no operator between:
        // publishOn there would drop a hold it had not yet delivered when cancelled, unclosed.
        hold -> untilLost(hold, body),
        ReactiveLocks::release,
        ReactiveLocks::releaseAfter,
        ReactiveLocks::release);
  }

  /**
   * A hold from an acquisition started on subscription; a hold nobody takes is closed. The sink
   * runs its cancel callback only when it has delivered no value, and delivers none after (it drops
   * a later one, as a next signal after termination, unseen by discard hooks, when the grant comes
   * while the cancel is under way): so the callback withdraws the attempt or closes its hold.
   */
  private static Mono<LockHold> hold(Supplier<CompletableFuture<LockHold>> acquire) {
    return Mono.create(
        sink -> {
          CompletableFuture<LockHold> acquiring = acquire.get();
          sink.onCancel(
              () -> {
                acquiring.cancel(false); // a racing grant: released by the lock
                var unused = acquiring.thenAccept(hold -> release(hold).subscribe());
              });
          var unused =
              acquiring.whenComplete(
                  (hold, failure) -> {
                    if (failure == null) {
                      sink.success(hold);
                    } else {
                      sink.error(unwrap(failure));
                    }
                  });
        });
  }

  /**
   * The work's signals until the hold is lost; then the work is cancelled and the result fails with
   * the loss. ({@code takeUntilOther} cancels the work only when the other publisher emits: when it
   * fails it fails the result and leaves the work running, and when it completes it cancels the
   * work and completes the result. So the loss is emitted, kept, and raised after; and a hold
   * closed unlost, whose loss stage fails, by the body that ends its use of the lock early, ends
   * nothing.)
   */
  private static <T> Flux<T> untilLost(
      LockHold hold, Function<? super LockHold, ? extends Publisher<T>> body) {
    AtomicReference<LockOwnershipLostException> loss = new AtomicReference<>();
    Mono<LockOwnershipLostException> lost =
        Mono.fromCompletionStage(hold.whenLost()) // a stage of our own: its cancel is harmless
            .onErrorResume(closedUnlost -> Mono.never())
            .doOnNext(loss::set);
    // A body whose subscription task began as the loss was told is not started: its function is
    // not called once the loss is known (the result fails with it all the same).
    Flux<T> work =
        Flux.<T>defer(() -> loss.get() == null ? body.apply(hold) : Flux.empty())
            .subscribeOn(Schedulers.boundedElastic());
    return work.takeUntilOther(lost)
        .concatWith(Mono.defer(() -> loss.get() == null ? Mono.empty() : Mono.error(loss.get())));
  }

  /** Closes the hold off the calling thread: the delete may wait for ZooKeeper. */
  private static Mono<Void> release(LockHold hold) {
    return Mono.fromRunnable(hold::close).subscribeOn(Schedulers.boundedElastic()).then();
  }

  /**
   * Closes the hold after the work failed: the work's failure stays the one the subscriber gets,
   * with the close's suppressed in it (usingWhen would wrap it in a RuntimeException of its own).
   */
  private static Mono<Void> releaseAfter(LockHold hold, Throwable failure) {
    return release(hold)
        .onErrorResume(
            closing -> {
              if (closing != failure) {
                failure.addSuppressed(closing);
              }
              return Mono.empty();
            });
  }

  private static Throwable unwrap(Throwable failure) {
    return failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause()
        : failure;
  }
}

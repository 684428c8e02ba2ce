package io.lockstep.recipes.internal.engine;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Function;

/**
 * Fields of an attempt made when first needed, through their owner's field updater, for what most
 * attempts never need (a janitor, a notifier, a telemetry, a loss stage): an attempt that needs
 * none of them makes none. Among them, signals: a future that a waiter asks for ({@link #awaited})
 * and that is given once ({@link #give}); made only if someone waits before it is given.
 */
final class Lazy {
  /** What a signal's field holds once given, and what those who wait from then on get. */
  static final CompletableFuture<Void> GIVEN = CompletableFuture.completedFuture(null);

  private Lazy() {}

  /**
   * {@code owner}'s {@code field}, made by {@code make} if it is still null (a race makes two, and
   * keeps the first). {@code make} should capture nothing, so that asking costs no object.
   */
  static <O, T> T get(
      O owner, AtomicReferenceFieldUpdater<O, T> field, Function<? super O, ? extends T> make) {
    T made = field.get(owner);
    if (made == null) {
      made = make.apply(owner);
      if (!field.compareAndSet(owner, null, made)) {
        made = field.get(owner);
      }
    }
    return made;
  }

  /** The future that completes when the signal in {@code owner}'s {@code field} is given. */
  @SuppressWarnings({"rawtypes", "unchecked"}) // a signal's field holds futures of Void only
  static <O> CompletableFuture<Void> awaited(
      O owner, AtomicReferenceFieldUpdater<O, CompletableFuture> field) {
    return get(owner, field, o -> new CompletableFuture<Void>());
  }

  /** Gives the signal: its waiter, if any, goes on, and nobody waits for it from now on. */
  @SuppressWarnings({"rawtypes", "unchecked"})
  static <O> void give(O owner, AtomicReferenceFieldUpdater<O, CompletableFuture> field) {
    CompletableFuture<Void> waiting = field.getAndSet(owner, GIVEN);
    if (waiting != null) {
      waiting.complete(null);
    }
  }
}

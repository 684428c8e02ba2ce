package io.lockstep.recipes.internal.zk;

import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the engine's continuations. A failure thrown by a continuation would otherwise vanish into a
 * future nobody reads; here it is logged.
 */
public final class Callbacks {
  private static final Logger log = LoggerFactory.getLogger(Callbacks.class);

  private Callbacks() {}

  /** Runs {@code action} with the outcome of {@code stage} once it completes. */
  public static <T> void when(
      CompletionStage<T> stage, BiConsumer<? super T, ? super Throwable> action) {
    var unused =
        stage.whenComplete(
            (value, failure) -> {
              try {
                action.accept(value, failure);
              } catch (RuntimeException | Error e) {
                log.error("Lockstep continuation failed", e);
              }
            });
  }
}

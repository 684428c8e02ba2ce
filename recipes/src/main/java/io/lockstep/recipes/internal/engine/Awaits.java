package io.lockstep.recipes.internal.engine;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * Bounded, quiet waits of a caller's thread for what the engine sent: they end on time whatever
 * happens to the requests, and never throw.
 */
public final class Awaits {
  private Awaits() {}

  /**
   * Waits for what a release sent, while the client is connected and at most the client's
   * connection timeout (at once if ZooKeeper cannot be reached); an interrupt stops the wait, kept.
   */
  public static void whileConnected(CompletableFuture<?> sent, LockSettings settings) {
    if (!sent.isDone()) {
      quietly(
          CompletableFuture.anyOf(sent, settings.unreachable()), settings.connectionTimeoutNanos());
    }
  }

  /**
   * Waits for a guaranteed delete of ours ({@code NodeDeletes}), as {@link #whileConnected} waits:
   * ZooKeeper answers the delete at the latest when the connection drops, so the wait need not
   * watch the connection beyond asking whether it is up now.
   */
  public static void deleted(CompletableFuture<?> deleting, LockSettings settings) {
    if (!deleting.isDone() && settings.connected()) {
      quietly(deleting, settings.connectionTimeoutNanos());
    }
  }

  /** Waits for {@code future} for at most {@code nanos}; an interrupt stops the wait, kept. */
  public static void quietly(CompletableFuture<?> future, long nanos) {
    try {
      Parking.await(future, nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      // done waiting
    }
  }
}

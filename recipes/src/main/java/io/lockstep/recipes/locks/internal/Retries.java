package io.lockstep.recipes.locks.internal;

import java.util.OptionalLong;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * The client's {@link org.apache.curator.RetryPolicy}, asked without sleeping: the engine schedules
 * the next attempt instead of parking a thread.
 */
final class Retries {
  private Retries() {}

  /**
   * Asks the client's retry policy whether attempt number {@code retryCount} (from 0) may go ahead.
   *
   * @return the delay before the retry in milliseconds, or empty if the policy gives up
   */
  static OptionalLong delayMillis(CuratorFramework client, int retryCount, long startNanos) {
    long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    long[] sleep = {0};
    boolean allowed =
        client
            .getZookeeperClient()
            .getRetryPolicy()
            .allowRetry(retryCount, elapsedMillis, (time, unit) -> sleep[0] = unit.toMillis(time));
    return allowed ? OptionalLong.of(sleep[0]) : OptionalLong.empty();
  }

  /**
   * Whether the client's retry policy retries this kind of failure (connection loss and the like).
   */
  static boolean isRetryable(CuratorFramework client, Throwable failure) {
    return client.getZookeeperClient().getRetryPolicy().allowRetry(unwrap(failure));
  }

  /**
   * The ZooKeeper error code of a failure, or {@code SYSTEMERROR} if it is not a KeeperException.
   */
  static KeeperException.Code code(Throwable failure) {
    Throwable cause = unwrap(failure);
    return cause instanceof KeeperException
        ? ((KeeperException) cause).code()
        : KeeperException.Code.SYSTEMERROR;
  }

  /** The failure itself, without the CompletionException a composed future wraps it in. */
  static Throwable unwrap(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }
}

package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockUnreachableException;
import java.time.Duration;
import org.apache.zookeeper.KeeperException;

/** The exceptions an attempt ends with, each naming the lock. */
public final class LockFailures {
  private LockFailures() {}

  /** A failure as a {@link LockException} naming the lock (kept if it names it already). */
  public static LockException of(String description, Throwable failure) {
    Throwable cause = Retries.unwrap(failure);
    if (cause instanceof LockException
        && String.valueOf(cause.getMessage()).contains(description)) {
      return (LockException) cause;
    }
    if (isUnreachable(cause)) {
      return new LockUnreachableException(
          "Lock " + description + ": ZooKeeper could not be reached: " + cause.getMessage(), cause);
    }
    return new LockException("Lock " + description + ": " + cause.getMessage(), cause);
  }

  /** Whether {@code failure} says the server could not be reached (rather than refused). */
  static boolean isUnreachable(Throwable failure) {
    if (!(failure instanceof KeeperException keeper)) {
      return false;
    }
    switch (keeper.code()) {
      case CONNECTIONLOSS:
      case OPERATIONTIMEOUT:
      case SESSIONEXPIRED:
        return true;
      default:
        return false;
    }
  }

  /**
   * A timed attempt ran out of budget while the client had no connection, or after it lost its
   * connection before the attempt reached the queue.
   */
  public static LockUnreachableException unreachable(String description, long budgetNanos) {
    return new LockUnreachableException(
        "Lock "
            + description
            + ": ZooKeeper could not be reached within the "
            + Duration.ofNanos(budgetNanos).toMillis()
            + " ms the acquire waited (the client had no connection when its budget ran out, or"
            + " lost it before the attempt reached the queue)",
        null);
  }

  /** The client was closed while the attempt waited. */
  static LockException clientClosed(String description) {
    return new LockException("Lock " + description + ": the Curator client was closed", null);
  }

  /** Our nodes were lost while waiting, and the retry policy allows no new attempt. */
  static LockException retriesExhausted(String description, String reason) {
    return new LockException(
        "Lock " + description + ": " + reason + ", and the retry policy allows no further attempt",
        null);
  }

  /** A hold of session {@code owner} was lost, for {@code reason}. */
  public static LockOwnershipLostException lost(String description, long owner, String reason) {
    return new LockOwnershipLostException(
        "Lock "
            + description
            + " was lost by session 0x"
            + Long.toHexString(owner)
            + ": "
            + reason);
  }

  /** A hold was lost, for {@code reason}, as its loss stage reports it. */
  static LockOwnershipLostException lost(String description, String reason) {
    return new LockOwnershipLostException("Lock " + description + " was lost: " + reason);
  }

  /**
   * The node a read node is tied to is gone: a downgrade's write hold, or a shared read place, was
   * lost.
   */
  static LockOwnershipLostException tieBroken(String description, String tiedTo) {
    return new LockOwnershipLostException(
        "Lock " + description + ": cannot tie a read node to " + tiedTo + ", which is gone");
  }
}

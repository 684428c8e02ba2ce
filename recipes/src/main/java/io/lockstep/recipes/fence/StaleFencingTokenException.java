package io.lockstep.recipes.fence;

import io.lockstep.recipes.locks.LockException;

/**
 * Thrown when a guarded resource refuses a fencing token because a greater one was admitted for it
 * before: the caller's hold is stale, a newer holder has written since (see {@link JdbcFence}).
 *
 * <p>This is not a failure of ZooKeeper or of the database: the fence did its job. The caller's
 * transaction has written nothing on the fence's behalf, but it may hold the caller's own writes:
 * roll it back, stop the guarded work and release the hold. The message names the resource, the
 * refused token and the greatest token admitted so far.
 */
public class StaleFencingTokenException extends LockException {
  private static final long serialVersionUID = 1L;

  /** The resource that refused the token. */
  private final String resource;

  /** The refused token. */
  private final long token;

  /** The greatest token admitted for the resource when the token was refused. */
  private final long highestAdmitted;

  /**
   * Creates an exception.
   *
   * @param resource the resource that refused the token
   * @param token the refused token
   * @param highestAdmitted the greatest token admitted for the resource, greater than {@code token}
   */
  public StaleFencingTokenException(String resource, long token, long highestAdmitted) {
    super(
        "stale fencing token "
            + token
            + " for resource '"
            + resource
            + "': token "
            + highestAdmitted
            + " was admitted before (a newer holder has written)",
        null);
    this.resource = resource;
    this.token = token;
    this.highestAdmitted = highestAdmitted;
  }

  /**
   * The resource that refused the token.
   *
   * @return the resource's name, as passed to {@link JdbcFence#admit(java.sql.Connection, String,
   *     long)}
   */
  public String resource() {
    return resource;
  }

  /**
   * The refused token.
   *
   * @return the caller's fencing token
   */
  public long token() {
    return token;
  }

  /**
   * The greatest token admitted for the resource when the caller's was refused.
   *
   * @return a token greater than {@link #token()}
   */
  public long highestAdmitted() {
    return highestAdmitted;
  }
}

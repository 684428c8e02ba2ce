package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.LockEngine;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.listen.Listenable;

/**
 * Where {@link LockObserver}s are registered: for every lock made with a Curator client, or for one
 * lock.
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.AcquireOutcome;
 * import io.lockstep.recipes.locks.LockAttempt;
 * import io.lockstep.recipes.locks.LockObserver;
 * import io.lockstep.recipes.locks.LockObservers;
 * import java.time.Duration;
 * import org.apache.curator.framework.CuratorFramework;
 * import org.slf4j.Logger;
 * import org.slf4j.LoggerFactory;
 *
 * CuratorFramework client = ...; // a started client
 * Logger log = LoggerFactory.getLogger("locks");
 * LockObservers.of(client).addListener(new LockObserver() {
 *   public void attemptEnded(LockAttempt attempt, AcquireOutcome outcome, Duration waited, long t) {
 *     log.info("{} {} after {}", attempt.path(), outcome, waited);
 *   }
 * });
 * }</pre>
 *
 * <p>An observer added with an executor runs there; otherwise as {@link LockObserver} says.
 */
public final class LockObservers {
  private LockObservers() {}

  /**
   * The observers of every lock made with {@code client}, its namespace facades included, from now
   * on and for as long as the client lives.
   *
   * @param client a Curator client
   * @return the container to add observers to and remove them from
   * @throws NullPointerException if {@code client} is null
   */
  public static Listenable<LockObserver> of(CuratorFramework client) {
    return LockEngine.of(Objects.requireNonNull(client, "client")).observers();
  }

  /**
   * The observers of one lock object: of both its sides for a {@link ReadWriteMutex} view's lock,
   * only of that side.
   *
   * @param lock a Lockstep lock: a recipe, a side of a {@link ReadWriteMutex}, or the atomic form
   *     of {@link MultiMutex}
   * @return the container to add observers to and remove them from
   * @throws NullPointerException if {@code lock} is null
   * @throws IllegalArgumentException if {@code lock} is a {@link MultiMutex} composed of other
   *     locks (observe those), or not a Lockstep lock
   */
  public static Listenable<LockObserver> of(FencedLock lock) {
    Objects.requireNonNull(lock, "lock");
    FencedLock engine = lock instanceof MultiMutex ? ((MultiMutex) lock).delegate() : lock;
    if (!(engine instanceof AbstractFencedLock)) {
      throw new IllegalArgumentException(
          "lock: observe the locks a composed MultiMutex is made of, not " + lock);
    }
    return ((AbstractFencedLock) engine).holds.settings().observers();
  }
}

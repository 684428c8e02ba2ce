package io.lockstep.recipes.internal.engine;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The attempts of one lock object that are not granted or ended yet, so that its close can withdraw
 * them: their callers get the lock object's "closed" failure; a grant that won the race is kept.
 * Used by every {@link AttemptFactory}.
 */
public final class LiveAttempts {
  private final Set<Attempt> live = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /** Whether {@link #closeAll} was called. */
  public boolean isClosed() {
    return closed;
  }

  /**
   * Keeps {@code attempt} until it is granted or ends; if the lock object closed meanwhile, it is
   * withdrawn at once.
   *
   * @return {@code attempt}
   */
  public Attempt track(Attempt attempt, Supplier<RuntimeException> closedFailure) {
    live.add(attempt);
    var unused = attempt.grantedFuture().whenComplete((v, f) -> live.remove(attempt));
    if (closed) {
      attempt.withdraw(closedFailure.get()); // closed while it started
    }
    return attempt;
  }

  /**
   * The lock object closed: every live attempt is withdrawn, failing with {@code closedFailure}.
   */
  public void closeAll(Supplier<RuntimeException> closedFailure) {
    closed = true;
    for (Attempt attempt : live) {
      attempt.withdraw(closedFailure.get());
    }
  }
}

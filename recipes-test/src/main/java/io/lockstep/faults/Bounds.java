package io.lockstep.faults;

import java.util.concurrent.TimeUnit;

/**
 * The timing every part of the process fault suite agrees on: the servers', the clients', the
 * faults' and the checkers'.
 *
 * <p>Sessions are short so that a freeze past the session keeps the run short: the servers tick
 * every {@value #TICK_MS} ms (so they accept sessions from 1 s), the clients ask for {@value
 * #SESSION_TIMEOUT_MS} ms. Every liveness bound is {@link #BOUND_MS}: the session timeout plus two
 * seconds, the longest a frozen or dead participant may block the others (the server ends its
 * session after the timeout, rounded up to a tick) plus the time to reconnect and re-read a queue.
 * A timed call may take its budget plus the library's {@value #GRACE_MS} ms grace plus {@value
 * #NOISE_MS} ms of scheduling noise: a dozen JVMs share two cores here, and a collection or a
 * descheduled thread costs tens to hundreds of milliseconds.
 */
final class Bounds {
  /** The servers' tick: sessions of 2 to 60 ticks are accepted (ZooKeeper's default limits). */
  static final int TICK_MS = 500;

  /** The session timeout every client asks for. */
  static final int SESSION_TIMEOUT_MS = 4_000;

  /** How long a client waits for one connection attempt. */
  static final int CONNECTION_TIMEOUT_MS = 2_000;

  /** Every liveness bound: session timeout plus two seconds. */
  static final long BOUND_MS = SESSION_TIMEOUT_MS + 2_000;

  /** The library's grace after a timed call's budget (docs/failure-semantics.md). */
  static final long GRACE_MS = 200;

  /** The scheduling noise allowed on top of budget and grace. */
  static final long NOISE_MS = 500;

  /** How long a freeze "past the session" lasts: the session timeout and a second and a half. */
  static final long PAST_SESSION_MS = SESSION_TIMEOUT_MS + 1_500;

  /** A step of a hold that took this much longer than planned means the process was paused. */
  static final long PAUSE_THRESHOLD_MS = 1_000;

  /** How long a holder that noticed a pause waits to be told what became of its hold. */
  static final long VERDICT_WAIT_MS = BOUND_MS + 2_000;

  private Bounds() {}

  static long nanos(long millis) {
    return TimeUnit.MILLISECONDS.toNanos(millis);
  }

  static double millis(long nanos) {
    return nanos / 1e6;
  }
}

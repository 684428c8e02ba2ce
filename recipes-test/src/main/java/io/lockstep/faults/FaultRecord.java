package io.lockstep.faults;

/**
 * One fault the test process injected, stamped on the machine's monotonic clock.
 *
 * @param kind what was done
 * @param group the group it aimed at, or null for a fault of the servers (every group)
 * @param worker the worker it aimed at, or -1
 * @param target what it aimed at, described (a worker and pid, a server and port)
 * @param start just before the fault began (before {@code kill -STOP}, the kill, the command)
 * @param started just after it began
 * @param heal just after it was healed (after {@code kill -CONT}, the restarted server serving);
 *     the start for a fault with nothing to heal (a kill, a client-side expiry)
 * @param session the session of the worker at the start, or 0
 * @param pastSession whether it lasted past the session timeout
 */
record FaultRecord(
    FaultKind kind,
    String group,
    int worker,
    String target,
    long start,
    long started,
    long heal,
    long session,
    boolean pastSession) {

  /** Whether it hit one worker process (and so one group) rather than the servers. */
  boolean processFault() {
    return worker >= 0;
  }

  /** Whether it hit {@code group}: its own group, or every group for a fault of the servers. */
  boolean affects(String someGroup) {
    return group == null || group.equals(someGroup);
  }

  /** How long it lasted, in milliseconds. */
  long durationMs() {
    return Math.round(Bounds.millis(heal - start));
  }
}

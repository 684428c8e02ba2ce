package io.lockstep.faults;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds a run's record by hand, in milliseconds from an arbitrary origin, with the events the
 * workers would have sent: for the checkers' own tests.
 */
final class HandMadeHistory {
  private static final long ORIGIN = 5_000_000_000_000L;

  private final List<Event> events = new ArrayList<>();
  private final List<FaultRecord> faults = new ArrayList<>();
  private final List<StoreService.Decision> decisions = new ArrayList<>();
  private final List<NodeWatcher.Life> nodes = new ArrayList<>();
  private final Map<Integer, String> workerGroups = new HashMap<>();
  private final Map<String, GroupSpec> groups = new LinkedHashMap<>();
  private final Map<Integer, Long> deaths = new HashMap<>();

  static long at(long ms) {
    return ORIGIN + ms * 1_000_000L;
  }

  HandMadeHistory group(GroupSpec group, int... workers) {
    groups.put(group.name(), group);
    for (int worker : workers) {
      workerGroups.put(worker, group.name());
    }
    return this;
  }

  HandMadeHistory event(int worker, long ms, String type, Object... fields) {
    List<String> text = new ArrayList<>();
    for (Object field : fields) {
      text.add(String.valueOf(field));
    }
    events.add(new Event(worker, at(ms), type, text));
    return this;
  }

  HandMadeHistory session(int worker, long ms, long session) {
    return event(worker, ms, "session", Long.toHexString(session));
  }

  /** A hold that begins counting: {@code granted} with the worker's fields. */
  HandMadeHistory grant(int worker, long ms, String hold, long token, long session, String parts) {
    return event(
        worker, ms, "granted", "t0", hold, token, Long.toHexString(session), 1, 0, parts, 1);
  }

  HandMadeHistory state(int worker, long ms, String hold, String state) {
    return event(worker, ms, "state", "t0", hold, state);
  }

  HandMadeHistory end(int worker, long ms, String hold) {
    return event(worker, ms, "end", "t0", hold);
  }

  HandMadeHistory want(int worker, long ms) {
    return event(worker, ms, "want", "t0", -1);
  }

  HandMadeHistory idle(int worker, long ms) {
    return event(worker, ms, "idle", "t0");
  }

  HandMadeHistory commit(int worker, long ms, String hold, String lockPath, long token, long zxid) {
    return event(worker, ms, "commit", "t0", hold, lockPath, lockPath + "-data", token, zxid);
  }

  HandMadeHistory stored(
      int worker, long ms, String hold, String resource, long token, boolean accepted) {
    decisions.add(
        new StoreService.Decision(
            decisions.size(), at(ms), worker, hold, resource, token, accepted));
    return this;
  }

  HandMadeHistory fault(
      FaultKind kind, String group, int worker, long startMs, long healMs, long session) {
    faults.add(
        new FaultRecord(
            kind,
            group,
            worker,
            kind + " target",
            at(startMs),
            at(startMs),
            at(healMs),
            session,
            healMs - startMs > Bounds.SESSION_TIMEOUT_MS + Bounds.TICK_MS
                || kind == FaultKind.KILL_HOLDER));
    return this;
  }

  /** A node seen from {@code appearedMs} to {@code lastSeenMs}, gone at the next poll. */
  HandMadeHistory node(String path, long session, long appearedMs, long lastSeenMs) {
    return node(path, session, appearedMs, lastSeenMs, lastSeenMs + NodeWatcher.POLL_MS);
  }

  HandMadeHistory node(
      String path, long session, long appearedMs, long lastSeenMs, long vanishedMs) {
    nodes.add(new NodeWatcher.Life(path, session, at(appearedMs), at(lastSeenMs), at(vanishedMs)));
    return this;
  }

  HandMadeHistory died(int worker, long ms) {
    deaths.put(worker, at(ms));
    return this;
  }

  RunRecord record(long startMs, long endMs) {
    List<Event> sorted = new ArrayList<>(events);
    sorted.sort((a, b) -> Long.compare(a.at(), b.at()));
    return new RunRecord(
        sorted, faults, decisions, nodes, workerGroups, groups, at(startMs), at(endMs), deaths);
  }

  Findings safety(long startMs, long endMs) {
    Findings findings = new Findings();
    SafetyChecks.check(new HistoryReplay(record(startMs, endMs)), findings);
    return findings;
  }

  Findings liveness(long startMs, long endMs) {
    Findings findings = new Findings();
    LivenessChecks.check(new HistoryReplay(record(startMs, endMs)), findings);
    return findings;
  }

  Findings nodes(long startMs, long endMs) {
    Findings findings = new Findings();
    NodeChecks.check(record(startMs, endMs), findings);
    return findings;
  }
}

package io.lockstep.faults;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The liveness checks of a run:
 *
 * <ol>
 *   <li><b>every recipe recovers</b>: after each fault, no group it hit is stalled (a thread wants
 *       the lock, no hold counts) longer than {@link Bounds#BOUND_MS}, from the fault's start for a
 *       fault of one worker (the server heals it by ending that worker's session, which must not
 *       block the others longer than the session timeout) or its heal for a fault of the servers
 *       ({@link Stalls}); the longest such stall is the fault's recovery;
 *   <li><b>no waiter starved</b>: each time a thread wants its lock (from its {@code want} to its
 *       next {@code granted}; for an election, from entering the queue to being elected) it is
 *       granted within the bound plus one hold of each other thread of its group (the queue ahead
 *       of it drains in order), counted from the later of when it began to want and the end of the
 *       last fault of its group: its heal for a fault of the servers or of the thread's own worker,
 *       its start for a fault of another worker;
 *   <li><b>budgets</b>: every timed call (acquire, {@code tryAcquire}, {@code awaitLeadership})
 *       returned within its budget plus the library's grace plus the scheduling noise ({@link
 *       Bounds}), less any time its own process was frozen or, as its {@link PauseMeter} measured,
 *       could not run at all; every release (and step-down and election close) within the
 *       connection timeout plus grace plus noise, less the same.
 * </ol>
 *
 * <p>All are checked from the moment every group has granted its lock once: the start of a dozen
 * JVMs, compiling and loading classes on two cores, is not measured.
 *
 * <p>A timed call that reported ZooKeeper unreachable although its connection stayed up throughout
 * is noted as suspicious (slow is not unreachable), not counted as a violation.
 */
final class LivenessChecks {
  private LivenessChecks() {}

  /** Runs the checks; returns each fault's recovery, in milliseconds. */
  static Map<FaultRecord, Long> check(HistoryReplay replay, Findings findings) {
    RunRecord record = replay.record();
    Stalls stalls = new Stalls(replay);
    Map<FaultRecord, Long> recoveries = new LinkedHashMap<>();
    for (FaultRecord fault : record.faults()) {
      long ms = stalls.recoveryMs(fault, record);
      recoveries.put(fault, ms);
      if (ms > Bounds.BOUND_MS) {
        findings.violation(
            "recovery",
            fault.kind().label()
                + " ("
                + fault.target()
                + "): a group was stalled "
                + ms
                + " ms after the fault, bound "
                + Bounds.BOUND_MS
                + " ms");
      }
    }
    waits(record, findings);
    budgets(record, findings);
    return recoveries;
  }

  /** The bound of one wait in {@code group}: the bound and one hold of each other thread. */
  static long waitBoundMs(GroupSpec group) {
    int threads = group.members().stream().mapToInt(GroupSpec.Member::threads).sum();
    return Bounds.BOUND_MS
        + (long) Math.max(0, threads - 1) * (group.pacing().holdMaxMs() + group.pacing().stepMs());
  }

  private static void waits(RunRecord record, Findings findings) {
    Map<String, List<Event>> byThread = new HashMap<>();
    for (Event event : record.events()) {
      if (event.type().equals("want") || event.type().equals("granted")) {
        byThread.computeIfAbsent(event.threadKey(), k -> new ArrayList<>()).add(event);
      }
    }
    byThread.forEach(
        (thread, events) -> {
          int worker = events.get(0).worker();
          GroupSpec group = record.groupOf(worker);
          Long death = record.deaths().get(worker);
          long wantedSince = -1;
          for (Event event : events) {
            if (event.type().equals("want")) {
              if (wantedSince < 0) {
                wantedSince = event.at();
              }
            } else {
              if (wantedSince >= 0) {
                judge(record, findings, group, thread, worker, wantedSince, event.at());
              }
              wantedSince = -1;
            }
          }
          if (wantedSince >= 0 && death == null && wantedSince < record.end()) {
            judge(record, findings, group, thread, worker, wantedSince, record.end());
          }
        });
  }

  private static void judge(
      RunRecord record,
      Findings findings,
      GroupSpec group,
      String thread,
      int worker,
      long from,
      long until) {
    long since = Math.max(from, record.start());
    FaultRecord cause =
        null; // the group's last fault that ended before the grant, or not long before the wait
    for (FaultRecord fault : record.faults()) {
      if (!fault.affects(group.name()) || fault.start() >= until) {
        continue;
      }
      long over = effectiveEnd(fault, worker);
      since = Math.max(since, over);
      if (over > from - Bounds.nanos(Bounds.BOUND_MS)
          && (cause == null || over > effectiveEnd(cause, worker))) {
        cause = fault;
      }
    }
    long waitedMs = Math.round(Bounds.millis(Math.max(0, until - since)));
    if (cause == null) {
      findings.max("longest wait outside faults (ms)", waitedMs);
    } else {
      findings.max("longest wait after a fault (ms)", waitedMs);
    }
    long bound = waitBoundMs(group);
    if (waitedMs > bound) {
      findings.violation(
          "no waiter starved",
          "worker "
              + thread
              + " of "
              + group.name()
              + " wanted the lock "
              + waitedMs
              + " ms"
              + (until == record.end() ? " and was still waiting at the end" : "")
              + (cause == null
                  ? ""
                  : " after " + cause.kind().label() + " (" + cause.target() + ")")
              + ", bound "
              + bound
              + " ms");
    }
  }

  private static long effectiveEnd(FaultRecord fault, int worker) {
    return fault.processFault() && fault.worker() != worker ? fault.start() : fault.heal();
  }

  private static void budgets(RunRecord record, Findings findings) {
    Map<Integer, List<long[]>> paused = paused(record, findings);
    long callLimit = Bounds.GRACE_MS + Bounds.NOISE_MS;
    long releaseLimit = Bounds.CONNECTION_TIMEOUT_MS + Bounds.GRACE_MS + Bounds.NOISE_MS;
    for (Event event : record.events()) {
      switch (event.type()) {
        case "attempt" -> {
          // thread, outcome, tookNanos, budgetMs, connectedThroughout
          findings.increment("attempts " + event.field(1).toLowerCase().replace('_', ' '));
          long budget = event.longField(3);
          long took = event.longField(2);
          if (event.at() - took < record.start()) {
            continue; // began while the JVMs were still starting
          }
          long tookMs =
              Math.round(
                  Bounds.millis(
                      took
                          - excused(
                              record, paused, event.worker(), event.at() - took, event.at())));
          if (budget >= 0 && Math.round(Bounds.millis(took)) > budget + callLimit) {
            findings.increment(
                "timed calls over the limit before freezes and pauses are taken off");
          }
          if (budget >= 0 && tookMs > budget + callLimit) {
            findings.violation(
                "budget",
                "worker "
                    + event.threadKey()
                    + " of "
                    + record.workerGroups().get(event.worker())
                    + ": a call with a budget of "
                    + budget
                    + " ms took "
                    + tookMs
                    + " ms ("
                    + event.field(1)
                    + "), limit budget + "
                    + callLimit
                    + " ms"
                    + overrunAt(record, event, event.at() - took));
          }
          if (event.field(1).equals("UNREACHABLE") && event.field(4).equals("1")) {
            findings.increment("unreachable while connected");
            findings.note(
                "worker "
                    + event.threadKey()
                    + " of "
                    + record.workerGroups().get(event.worker())
                    + " was told ZooKeeper was unreachable after "
                    + tookMs
                    + " ms (budget "
                    + budget
                    + " ms) while its connection stayed up"
                    + (faultActive(record, event.at() - took, event.at())
                        ? " (during a fault)"
                        : " (no fault active)"));
          }
        }
        case "released" -> {
          long took = event.longField(2);
          if (event.at() - took < record.start()) {
            continue;
          }
          long tookMs =
              Math.round(
                  Bounds.millis(
                      took
                          - excused(
                              record, paused, event.worker(), event.at() - took, event.at())));
          findings.max("slowest release (ms)", tookMs);
          if (tookMs > releaseLimit) {
            findings.violation(
                "budget",
                "worker "
                    + event.threadKey()
                    + ": a release took "
                    + tookMs
                    + " ms, limit "
                    + releaseLimit
                    + " ms");
          }
        }
        default -> {}
      }
    }
  }

  /**
   * How much of {@code from} to {@code until} {@code worker} could not run: frozen by a fault, or
   * paused as its {@link PauseMeter} measured (a collection, the operating system), each instant
   * counted once; in nanoseconds.
   */
  static long excused(
      RunRecord record, Map<Integer, List<long[]>> paused, int worker, long from, long until) {
    List<long[]> stretches = new ArrayList<>(paused.getOrDefault(worker, List.of()));
    for (FaultRecord fault : record.faults()) {
      if (fault.worker() == worker
          && fault.kind() != FaultKind.KILL_HOLDER
          && fault.kind() != FaultKind.CLIENT_EXPIRY) {
        stretches.add(new long[] {fault.start(), fault.heal()});
      }
    }
    long total = 0;
    for (long[] stretch : NodeChecks.merge(stretches)) {
      total += Math.max(0, Math.min(until, stretch[1]) - Math.max(from, stretch[0]));
    }
    return total;
  }

  /**
   * Where the {@link CallWatch} saw the call of {@code attempt} (begun at {@code from}) when it was
   * well past its budget, or nothing if it did not report it.
   */
  static String overrunAt(RunRecord record, Event attempt, long from) {
    String at = "";
    for (Event event : record.events()) {
      if (event.type().equals("overrun")
          && event.worker() == attempt.worker()
          && event.thread().equals(attempt.thread())
          && event.at() >= from
          && event.at() <= attempt.at()) {
        at = "; the call watch saw its thread at " + event.field(1);
      }
    }
    return at;
  }

  /**
   * Each worker's measured pauses, from its {@code unscheduled} events (stamped when they ended).
   */
  static Map<Integer, List<long[]>> paused(RunRecord record, Findings findings) {
    Map<Integer, List<long[]>> byWorker = new HashMap<>();
    for (Event event : record.events()) {
      if (event.type().equals("unscheduled")) {
        byWorker
            .computeIfAbsent(event.worker(), w -> new ArrayList<>())
            .add(new long[] {event.at() - event.longField(1), event.at()});
        long from = event.at() - event.longField(1);
        boolean frozen =
            record.faults().stream()
                .anyMatch(
                    f -> f.worker() == event.worker() && f.start() < event.at() && f.heal() > from);
        if (!frozen) {
          findings.max(
              "longest stretch a worker could not run, not frozen (ms)",
              Math.round(Bounds.millis(event.longField(1))));
        }
      }
    }
    return byWorker;
  }

  private static boolean faultActive(RunRecord record, long from, long until) {
    return record.faults().stream().anyMatch(f -> f.start() < until && f.heal() > from);
  }
}

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
 *   <li><b>no waiter starved, every recipe recovers</b>: each time a thread wants its lock (from
 *       its {@code want} to its next {@code granted}; for an election, from entering the queue to
 *       being elected) it is granted within {@link Bounds#BOUND_MS} of the later of the moment it
 *       began to want and the last fault of its group before the grant ended. A fault of the
 *       servers ends when it is healed (thawed, restarted); a fault of another worker of the group
 *       ends, for the others, when it began: the server heals it by ending that worker's session,
 *       which must not block them longer than the session timeout; for the worker it hit, it ends
 *       when healed. The slowest such wait after each fault is that fault's recovery;
 *   <li><b>budgets</b>: every timed call (acquire, {@code tryAcquire}, {@code awaitLeadership})
 *       returned within its budget plus the library's grace plus the scheduling noise ({@link
 *       Bounds}), less any time its own process was frozen; every release (and step-down and
 *       election close) within the connection timeout plus grace plus noise.
 * </ol>
 *
 * <p>Both are checked from the moment every group has granted its lock once: the start of a dozen
 * JVMs, compiling and loading classes on two cores, is not measured.
 *
 * <p>A timed call that reported ZooKeeper unreachable although its connection stayed up throughout
 * is noted as suspicious (slow is not unreachable), not counted as a violation.
 */
final class LivenessChecks {
  private LivenessChecks() {}

  /** Runs the checks; returns each fault's recovery, in milliseconds. */
  static Map<FaultRecord, Long> check(RunRecord record, Findings findings) {
    Map<FaultRecord, Long> recoveries = new LinkedHashMap<>();
    record.faults().forEach(f -> recoveries.put(f, 0L));
    waits(record, findings, recoveries);
    budgets(record, findings);
    recoveries.forEach(
        (fault, ms) -> {
          if (ms > Bounds.BOUND_MS) {
            findings.violation(
                "recovery",
                fault.kind().label()
                    + " ("
                    + fault.target()
                    + "): a waiter was granted only "
                    + ms
                    + " ms after the fault, bound "
                    + Bounds.BOUND_MS
                    + " ms");
          }
        });
    return recoveries;
  }

  private static void waits(
      RunRecord record, Findings findings, Map<FaultRecord, Long> recoveries) {
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
                judge(record, findings, recoveries, group, thread, worker, wantedSince, event.at());
              }
              wantedSince = -1;
            }
          }
          if (wantedSince >= 0 && death == null && wantedSince < record.end()) {
            judge(record, findings, recoveries, group, thread, worker, wantedSince, record.end());
          }
        });
  }

  private static void judge(
      RunRecord record,
      Findings findings,
      Map<FaultRecord, Long> recoveries,
      GroupSpec group,
      String thread,
      int worker,
      long from,
      long until) {
    long since = Math.max(from, record.start());
    FaultRecord cause = null; // the fault of the group that ended last before the grant
    long causeEnd = Long.MIN_VALUE;
    for (FaultRecord fault : record.faults()) {
      if (!fault.affects(group.name()) || fault.start() >= until) {
        continue;
      }
      long over = effectiveEnd(fault, worker);
      since = Math.max(since, over);
      if (over < until && over > causeEnd) {
        cause = fault;
        causeEnd = over;
      }
    }
    long waitedMs = Math.round(Bounds.millis(Math.max(0, until - since)));
    if (cause != null && from < causeEnd + Bounds.nanos(Bounds.BOUND_MS)) {
      recoveries.merge(cause, waitedMs, Math::max);
    } else {
      findings.max("longest wait outside faults (ms)", waitedMs);
    }
    if (waitedMs > Bounds.BOUND_MS) {
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
              + Bounds.BOUND_MS
              + " ms");
    }
  }

  private static long effectiveEnd(FaultRecord fault, int worker) {
    return fault.processFault() && fault.worker() != worker ? fault.start() : fault.heal();
  }

  private static void budgets(RunRecord record, Findings findings) {
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
                      took - frozen(record, event.worker(), event.at() - took, event.at())));
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
                    + " ms");
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
                      took - frozen(record, event.worker(), event.at() - took, event.at())));
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

  /** How long {@code worker} was frozen between {@code from} and {@code until}, in nanoseconds. */
  static long frozen(RunRecord record, int worker, long from, long until) {
    long total = 0;
    for (FaultRecord fault : record.faults()) {
      if (fault.worker() == worker
          && fault.kind() != FaultKind.KILL_HOLDER
          && fault.kind() != FaultKind.CLIENT_EXPIRY) {
        long start = Math.max(from, fault.start());
        long end = Math.min(until, fault.heal());
        total += Math.max(0, end - start);
      }
    }
    return total;
  }

  private static boolean faultActive(RunRecord record, long from, long until) {
    return record.faults().stream().anyMatch(f -> f.start() < until && f.heal() > from);
  }
}

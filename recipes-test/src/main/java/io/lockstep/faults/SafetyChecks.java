package io.lockstep.faults;

import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.ExclusionChecker;
import io.lockstep.testing.LockPart;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;

/**
 * The safety checks of a run, on its replayed history:
 *
 * <ol>
 *   <li><b>exclusion</b>: no two counting holds of one path overlap where one is exclusive, no more
 *       counting leases than the semaphore has, tokens follow the order of the holds ({@link
 *       ExclusionChecker});
 *   <li><b>distinct tokens</b>: no two holds of one path, one of them exclusive, share a token;
 *   <li><b>store order</b>: the writes the fenced store accepted, replayed in its commit order,
 *       never go down in token for one resource (a stale write accepted would);
 *   <li><b>store refusals</b>: the store refused only holders told of risk or loss, or overtaken
 *       ({@link HistoryReplay});
 *   <li><b>zookeeper order</b>: the writes committed behind ownership checks, replayed in zxid
 *       order per data node, never go down in token; and none committed at a zxid above the token
 *       of a later hold of its path (that hold was granted only once the writer's node was gone, so
 *       the writer's check must have failed; for a shared hold, a later exclusive one);
 *   <li><b>frozen holders</b>: every hold in progress when its process was frozen past its session
 *       is told {@code LOST} within the bound after the thaw, and never {@code HELD} again (its
 *       holder, having noticed the pause, waits for the verdict); every hold whose client expired
 *       its session, and that was not released within {@value #EXPIRY_HEARD_MS} ms, is told {@code
 *       LOST} within the bound;
 *   <li><b>worker errors</b>: no worker reported an unexpected exception.
 * </ol>
 */
final class SafetyChecks {
  /**
   * A hold whose client expired its session and that lasted this much longer must have been told
   * {@code LOST} (one that was released sooner may not have heard yet, and need not).
   */
  static final long EXPIRY_HEARD_MS = 1_000;

  private SafetyChecks() {}

  static void check(HistoryReplay replay, Findings findings) {
    ExclusionChecker.Verdict verdict = replay.checker().verdict();
    verdict.violations().forEach(v -> findings.violation("exclusion", v));
    findings.add("holds", verdict.holds());
    findings.add("overlaps excused (holder told, or its session ended)", verdict.excused());
    distinctTokens(replay, findings);
    storeOrder(replay.record(), findings);
    replay.wrongRefusals().forEach(v -> findings.violation("store refusal", v));
    zooKeeperOrder(replay, findings);
    frozenHolders(replay, findings);
    frozenNodes(replay.record(), findings);
    for (Event event : replay.record().events()) {
      if (event.type().equals("error")) {
        findings.violation(
            "worker error",
            "worker " + event.worker() + " " + event.thread() + ": " + event.field(1));
      }
    }
  }

  static void distinctTokens(HistoryReplay replay, Findings findings) {
    Map<String, Map<Long, List<HistoryReplay.Hold>>> byPath = new HashMap<>();
    for (HistoryReplay.Hold hold : replay.holds().values()) {
      for (LockPart part : hold.parts()) {
        if (hold.token() != 0 && replay.record().capacity(part.path()) == 0) {
          byPath
              .computeIfAbsent(part.path(), p -> new HashMap<>())
              .computeIfAbsent(hold.token(), t -> new ArrayList<>())
              .add(hold);
        }
      }
    }
    byPath.forEach(
        (path, byToken) ->
            byToken.forEach(
                (token, holds) -> {
                  boolean exclusive =
                      holds.stream()
                          .anyMatch(
                              h ->
                                  h.parts().stream()
                                      .anyMatch(p -> p.path().equals(path) && !p.shared()));
                  if (holds.size() > 1 && exclusive) {
                    findings.violation(
                        "distinct tokens",
                        "holds "
                            + holds.stream().map(HistoryReplay.Hold::key).toList()
                            + " of "
                            + path
                            + " share token "
                            + token);
                  }
                }));
  }

  static void storeOrder(RunRecord record, Findings findings) {
    Map<String, StoreService.Decision> last = new HashMap<>();
    for (StoreService.Decision decision : record.decisions()) {
      findings.increment(decision.accepted() ? "store writes accepted" : "store writes refused");
      if (!decision.accepted()) {
        continue;
      }
      StoreService.Decision before = last.put(decision.resource(), decision);
      if (before != null && decision.token() < before.token()) {
        findings.violation(
            "store order",
            "stale write accepted for "
                + decision.resource()
                + ": token "
                + decision.token()
                + " of "
                + decision.holdKey()
                + " after token "
                + before.token()
                + " of "
                + before.holdKey());
      }
    }
  }

  static void zooKeeperOrder(HistoryReplay replay, Findings findings) {
    Map<String, List<Event>> byNode = new HashMap<>();
    for (Event event : replay.record().events()) {
      switch (event.type()) {
        case "commit" -> {
          findings.increment("zookeeper writes committed");
          byNode.computeIfAbsent(event.field(3), n -> new ArrayList<>()).add(event);
        }
        case "zk" -> findings.increment("zookeeper writes " + event.field(2).toLowerCase());
        default -> {}
      }
    }
    // commit fields: thread, holdKey, lockPath, dataNode, token, zxid
    byNode.forEach(
        (node, commits) -> {
          commits.sort(Comparator.comparingLong(c -> c.longField(5)));
          for (int i = 1; i < commits.size(); i++) {
            if (commits.get(i).longField(4) < commits.get(i - 1).longField(4)) {
              findings.violation(
                  "zookeeper order",
                  "stale write committed to "
                      + node
                      + ": token "
                      + commits.get(i).longField(4)
                      + " at zxid "
                      + commits.get(i).longField(5)
                      + " after token "
                      + commits.get(i - 1).longField(4)
                      + " at zxid "
                      + commits.get(i - 1).longField(5));
            }
          }
        });
    Map<String, NavigableSet<Long>> allTokens = new HashMap<>();
    Map<String, NavigableSet<Long>> exclusiveTokens = new HashMap<>();
    for (HistoryReplay.Hold hold : replay.holds().values()) {
      for (LockPart part : hold.parts()) {
        if (hold.token() != 0) {
          allTokens.computeIfAbsent(part.path(), p -> new TreeSet<>()).add(hold.token());
          if (!part.shared()) {
            exclusiveTokens.computeIfAbsent(part.path(), p -> new TreeSet<>()).add(hold.token());
          }
        }
      }
    }
    for (List<Event> commits : byNode.values()) {
      for (Event commit : commits) {
        String path = commit.field(2);
        HistoryReplay.Hold hold = replay.holds().get(commit.field(1));
        if (hold == null || replay.record().capacity(path) > 0) {
          continue;
        }
        boolean shared = hold.parts().stream().anyMatch(p -> p.path().equals(path) && p.shared());
        NavigableSet<Long> later = (shared ? exclusiveTokens : allTokens).get(path);
        Long newer = later == null ? null : later.higher(commit.longField(4));
        if (newer != null && newer < commit.longField(5)) {
          findings.violation(
              "zookeeper order",
              "write of "
                  + hold.key()
                  + " (token "
                  + commit.longField(4)
                  + ") committed at zxid "
                  + commit.longField(5)
                  + " to "
                  + commit.field(3)
                  + ", after a hold of "
                  + path
                  + " with token "
                  + newer
                  + " was granted");
        }
      }
    }
  }

  static void frozenHolders(HistoryReplay replay, Findings findings) {
    for (FaultRecord fault : replay.record().faults()) {
      boolean frozenPast =
          fault.kind().process()
              && fault.kind() != FaultKind.KILL_HOLDER
              && fault.kind() != FaultKind.CLIENT_EXPIRY
              && fault.pastSession();
      boolean expired = fault.kind() == FaultKind.CLIENT_EXPIRY;
      if (!frozenPast && !expired) {
        continue;
      }
      long from = frozenPast ? fault.heal() : fault.started();
      for (HistoryReplay.Hold hold : replay.holds().values()) {
        Long end = replay.endOf(hold.key());
        boolean inProgress =
            hold.worker() == fault.worker()
                && hold.grantedAt() < fault.start()
                && (end == null || end > fault.started());
        if (!inProgress || toldLostBefore(replay, hold, fault.start())) {
          continue;
        }
        boolean toldLost =
            replay.statesOf(hold.key()).stream()
                .anyMatch(e -> e.at() >= from && e.field(2).equals(LockState.LOST.name()));
        if (expired
            && !toldLost
            && end != null
            && end - fault.started() < Bounds.nanos(EXPIRY_HEARD_MS)) {
          findings.increment("holds released before their client's expiry was heard");
          continue;
        }
        findings.increment(
            frozenPast ? "holds frozen past their session" : "holds whose client expired");
        checkToldLost(replay, findings, fault, hold, from, frozenPast);
      }
    }
  }

  /**
   * Counts the freezes of a waiter or a lingering process that froze a node of its session in its
   * group's queue (the fault did what it aims at: the queue waits for that session's end).
   */
  static void frozenNodes(RunRecord record, Findings findings) {
    for (FaultRecord fault : record.faults()) {
      if (fault.kind() != FaultKind.FREEZE_WAITER && fault.kind() != FaultKind.FREEZE_LINGERER) {
        continue;
      }
      GroupSpec group = record.groups().get(fault.group());
      boolean queued =
          record.nodes().stream()
              .anyMatch(
                  life ->
                      life.session() == fault.session()
                          && group.directories().stream()
                              .anyMatch(d -> life.path().startsWith(d + "/"))
                          && life.appeared() <= fault.start()
                          && life.lastSeen() >= fault.started());
      if (queued) {
        findings.increment(
            fault.kind() == FaultKind.FREEZE_WAITER
                ? "queued waiters frozen"
                : "lingering places frozen");
      }
    }
  }

  private static boolean toldLostBefore(HistoryReplay replay, HistoryReplay.Hold hold, long at) {
    return replay.statesOf(hold.key()).stream()
        .anyMatch(s -> s.at() < at && s.field(2).equals(LockState.LOST.name()));
  }

  private static void checkToldLost(
      HistoryReplay replay,
      Findings findings,
      FaultRecord fault,
      HistoryReplay.Hold hold,
      long from,
      boolean frozenPast) {
    List<Event> states = replay.statesOf(hold.key());
    Event lost =
        states.stream()
            .filter(s -> s.at() >= from && s.field(2).equals(LockState.LOST.name()))
            .findFirst()
            .orElse(null);
    String what =
        hold.key()
            + " of "
            + fault.target()
            + (frozenPast ? ", frozen " + fault.durationMs() + " ms," : ", its session expired,");
    if (lost == null) {
      findings.violation(
          "frozen holder told LOST", what + " was never told LOST (states " + names(states) + ")");
    } else if (lost.at() - from > Bounds.nanos(Bounds.BOUND_MS)) {
      findings.violation(
          "frozen holder told LOST",
          what + " was told LOST " + Math.round(Bounds.millis(lost.at() - from)) + " ms later");
    } else {
      findings.max(
          "slowest LOST after a thaw or expiry (ms)", Math.round(Bounds.millis(lost.at() - from)));
    }
    boolean heldBefore = hold.heldTold();
    for (Event state : states) {
      boolean held = state.field(2).equals(LockState.HELD.name());
      if (held && heldBefore && state.at() >= from) {
        findings.violation(
            "frozen holder never HELD again", what + " was told HELD again after the fault");
      }
      heldBefore |= held;
    }
  }

  private static List<String> names(List<Event> states) {
    return states.stream().map(s -> s.field(2)).toList();
  }
}

package io.lockstep.faults;

import io.lockstep.testing.ExclusionChecker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * When each group was stalled: some thread of it wanted the lock (from its {@code want} to its
 * {@code granted}, or to giving up) and no hold of it counted (no holder, or only holders told of
 * risk or loss, or frozen or killed past their sessions). A queue that drains in order is not
 * stalled; a lock held by nobody while others wait is.
 *
 * <p>A fault's recovery is the longest stall of a group it hit, from the fault's start (a fault of
 * one worker: the server heals it by ending that worker's session) or its heal (a fault of the
 * servers), among the stalls under way within the bound after the heal, up to the start of the
 * group's next fault.
 */
final class Stalls {
  private final Map<String, List<long[]>> byGroup = new HashMap<>();

  Stalls(HistoryReplay replay) {
    RunRecord record = replay.record();
    Map<String, List<long[]>> wanting = wanting(record);
    Map<String, List<ExclusionChecker.Segment>> segments = replay.segmentsByGroup();
    for (String group : record.groups().keySet()) {
      List<long[]> held = new ArrayList<>();
      for (ExclusionChecker.Segment segment : segments.getOrDefault(group, List.of())) {
        held.add(new long[] {segment.start(), segment.end()});
      }
      byGroup.put(
          group,
          minus(NodeChecks.merge(wanting.getOrDefault(group, List.of())), NodeChecks.merge(held)));
    }
  }

  /** The stalls of {@code group}, in time order. */
  List<long[]> of(String group) {
    return byGroup.getOrDefault(group, List.of());
  }

  /**
   * The recovery of {@code fault}, in milliseconds: the longest stall of a group it hit, under way
   * within the bound after its heal, from the fault's start (one worker's fault) or heal (the
   * servers'), up to the start of the group's next fault (which answers for what follows).
   */
  long recoveryMs(FaultRecord fault, RunRecord record) {
    long from = fault.processFault() ? fault.start() : fault.heal();
    long until = fault.heal() + Bounds.nanos(Bounds.BOUND_MS);
    long longest = 0;
    for (String group : record.groups().keySet()) {
      if (!fault.affects(group)) {
        continue;
      }
      long next = Long.MAX_VALUE;
      for (FaultRecord other : record.faults()) {
        if (other != fault && other.affects(group) && other.start() > from) {
          next = Math.min(next, other.start());
        }
      }
      for (long[] stall : of(group)) {
        if (stall[1] > from && stall[0] < Math.min(until, next)) {
          longest = Math.max(longest, Math.min(stall[1], next) - Math.max(stall[0], from));
        }
      }
    }
    return Math.round(Bounds.millis(longest));
  }

  /** Each group's stretches of some thread wanting its lock, from its events. */
  private static Map<String, List<long[]>> wanting(RunRecord record) {
    Map<String, Long> since = new HashMap<>();
    Map<String, List<long[]>> byGroup = new HashMap<>();
    for (Event event : record.events()) {
      switch (event.type()) {
        case "want" -> since.putIfAbsent(event.threadKey(), Math.max(event.at(), record.start()));
        case "granted", "idle" -> {
          Long from = since.remove(event.threadKey());
          if (from != null && event.at() > from) {
            add(byGroup, record, event.worker(), from, event.at());
          }
        }
        default -> {}
      }
    }
    since.forEach(
        (thread, from) -> {
          int worker = Integer.parseInt(thread.substring(0, thread.indexOf('/')));
          long until = record.deaths().getOrDefault(worker, record.end());
          if (until > from) {
            add(byGroup, record, worker, from, until);
          }
        });
    return byGroup;
  }

  private static void add(
      Map<String, List<long[]>> byGroup, RunRecord record, int worker, long from, long until) {
    long end = Math.min(until, record.end());
    if (end > from) {
      byGroup
          .computeIfAbsent(record.workerGroups().get(worker), g -> new ArrayList<>())
          .add(new long[] {from, end});
    }
  }

  /** The parts of merged {@code stretches} not covered by merged {@code covers}. */
  static List<long[]> minus(List<long[]> stretches, List<long[]> covers) {
    List<long[]> left = new ArrayList<>();
    for (long[] stretch : stretches) {
      long start = stretch[0];
      for (long[] cover : covers) {
        if (cover[1] <= start || cover[0] >= stretch[1]) {
          continue;
        }
        if (cover[0] > start) {
          left.add(new long[] {start, cover[0]});
        }
        start = Math.max(start, cover[1]);
      }
      if (start < stretch[1]) {
        left.add(new long[] {start, stretch[1]});
      }
    }
    return left;
  }
}

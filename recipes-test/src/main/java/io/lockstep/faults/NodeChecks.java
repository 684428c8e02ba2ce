package io.lockstep.faults;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * No participant's node outlives its close: no ephemeral node of a lock directory ({@link
 * NodeWatcher}) is seen later than {@link Bounds#BOUND_MS} after the moment its owner stopped
 * needing it. The owner is the worker that reported the node's session; it stops needing the node
 * when none of its threads wants or holds the lock any more ({@code idle}; for a lingering lock,
 * the linger later), or when the worker leaves the session behind (it reports a new one, or expires
 * it on its own), or when the worker is killed. If the servers were frozen or down then, the bound
 * runs from their heal. A node of a session no worker reported must be gone within the bound of its
 * first sighting. Nodes still there after the workers stopped are the leftover check's.
 */
final class NodeChecks {
  private NodeChecks() {}

  static void check(RunRecord record, Findings findings) {
    Map<Long, Integer> owners = new HashMap<>();
    Map<Long, Long> tenureEnds = tenureEnds(record, owners);
    Map<Integer, List<long[]>> interest = interest(record);
    for (NodeWatcher.Life life : record.nodes()) {
      if (!life.gone()) {
        continue;
      }
      String directory = life.path().substring(0, life.path().lastIndexOf('/'));
      GroupSpec group =
          record.groups().values().stream()
              .filter(g -> g.directories().contains(directory))
              .findFirst()
              .orElse(null);
      if (group == null) {
        continue;
      }
      findings.increment("lock nodes seen");
      Integer worker = owners.get(life.session());
      long orphaned;
      if (worker == null) {
        findings.increment("lock nodes of sessions no worker reported");
        orphaned = life.appeared();
      } else {
        long tenureEnd = tenureEnds.getOrDefault(life.session(), Long.MAX_VALUE);
        orphaned =
            orphanedSince(interest.getOrDefault(worker, List.of()), life.appeared(), tenureEnd);
      }
      if (orphaned == Long.MAX_VALUE) {
        continue; // wanted by its owner to the end: the leftover check's
      }
      long from = healed(record, orphaned);
      long deadline = from + Bounds.nanos(Bounds.BOUND_MS);
      findings.max(
          "longest node life after its owner let go, or the servers came back (ms)",
          Math.round(Bounds.millis(Math.max(0, life.lastSeen() - from))));
      if (life.lastSeen() > deadline) {
        findings.violation(
            "node outlived its owner",
            life.path()
                + " of session 0x"
                + Long.toHexString(life.session())
                + (worker == null ? " (no worker's)" : " (worker " + worker + ")")
                + " was still there "
                + Math.round(Bounds.millis(life.lastSeen() - from))
                + " ms after its owner let go of it"
                + (from == orphaned ? "" : " and the servers came back")
                + ", bound "
                + Bounds.BOUND_MS
                + " ms");
      }
    }
  }

  /** When each session stopped being its worker's: a new one reported, expired, or killed. */
  private static Map<Long, Long> tenureEnds(RunRecord record, Map<Long, Integer> owners) {
    Map<Integer, Long> current = new HashMap<>();
    Map<Long, Long> ends = new HashMap<>();
    for (Event event : record.events()) {
      if (event.type().equals("session")) {
        long session = Long.parseUnsignedLong(event.field(0), 16);
        owners.put(session, event.worker());
        Long previous = current.put(event.worker(), session);
        if (previous != null && previous != session) {
          ends.merge(previous, event.at(), Math::min);
        }
      } else if (event.type().equals("expired")) {
        ends.merge(Long.parseUnsignedLong(event.field(0), 16), event.at(), Math::min);
      }
    }
    record
        .deaths()
        .forEach(
            (worker, at) -> {
              Long session = current.get(worker);
              if (session != null) {
                ends.merge(session, at, Math::min);
              }
            });
    return ends;
  }

  /** Each worker's stretches of wanting or holding its lock, merged, a linger added to each. */
  private static Map<Integer, List<long[]>> interest(RunRecord record) {
    Map<String, Long> open = new HashMap<>();
    Map<Integer, List<long[]>> stretches = new HashMap<>();
    for (Event event : record.events()) {
      if (event.type().equals("want")) {
        open.putIfAbsent(event.threadKey(), event.at());
      } else if (event.type().equals("idle")) {
        Long since = open.remove(event.threadKey());
        if (since != null) {
          GroupSpec group = record.groupOf(event.worker());
          long linger = group.role() == RoleKind.LINGER ? Bounds.nanos(group.lingerMs()) : 0;
          stretches
              .computeIfAbsent(event.worker(), w -> new ArrayList<>())
              .add(new long[] {since, event.at() + linger});
        }
      }
    }
    open.forEach(
        (thread, since) ->
            stretches
                .computeIfAbsent(
                    Integer.parseInt(thread.substring(0, thread.indexOf('/'))),
                    w -> new ArrayList<>())
                .add(new long[] {since, Long.MAX_VALUE}));
    Map<Integer, List<long[]>> merged = new HashMap<>();
    stretches.forEach((worker, list) -> merged.put(worker, merge(list)));
    return merged;
  }

  static List<long[]> merge(List<long[]> stretches) {
    List<long[]> sorted = new ArrayList<>(stretches);
    sorted.sort(Comparator.comparingLong(s -> s[0]));
    List<long[]> merged = new ArrayList<>();
    for (long[] stretch : sorted) {
      long[] last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
      if (last != null && stretch[0] <= last[1]) {
        last[1] = Math.max(last[1], stretch[1]);
      } else {
        merged.add(new long[] {stretch[0], stretch[1]});
      }
    }
    return merged;
  }

  /** The first moment from {@code appeared} on when the owner did not need the node. */
  static long orphanedSince(List<long[]> interest, long appeared, long tenureEnd) {
    if (appeared >= tenureEnd) {
      return appeared;
    }
    for (long[] stretch : interest) {
      if (stretch[0] <= appeared && appeared < stretch[1]) {
        return Math.min(stretch[1], tenureEnd);
      }
    }
    return appeared;
  }

  /** {@code at}, or the heal of the servers' fault it fell in (repeatedly). */
  static long healed(RunRecord record, long at) {
    long t = at;
    boolean moved = true;
    while (moved) {
      moved = false;
      for (FaultRecord fault : record.faults()) {
        if (!fault.processFault() && fault.start() <= t && t < fault.heal()) {
          t = fault.heal();
          moved = true;
        }
      }
    }
    return t;
  }
}

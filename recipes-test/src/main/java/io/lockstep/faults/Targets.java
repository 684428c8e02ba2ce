package io.lockstep.faults;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Finds, while the run goes on, the worker a process fault aims at: one that holds, the one whose
 * node waits right behind a holder's, one that lingers, the election's leader. From the workers'
 * events (what each holds and wants now) and a fresh look at the lock directories.
 */
final class Targets {
  /**
   * A holder frozen or killed must still have this long to hold, so the fault lands in the hold: on
   * a loaded machine a few faults found at once reach their processes up to 150 ms after their
   * targets were picked. A group whose holds are all shorter asks for two thirds of the hold.
   */
  private static final long MIN_REMAINING_MS = 250;

  private final History history;
  private final Workers workers;
  private final NodeWatcher watcher;
  private final Random random;
  private final AtomicIntegerArray lingererLooks = new AtomicIntegerArray(3); // all, idle, nodes
  private volatile String lingererLook; // what the last search for a lingerer saw

  Targets(History history, Workers workers, NodeWatcher watcher, Random random) {
    this.history = history;
    this.workers = workers;
    this.watcher = watcher;
    this.random = random;
  }

  /**
   * What the last search for a target of {@code kind} saw, for a fault that found none: empty for a
   * kind whose searches record nothing (so far, only the lingering process's do).
   */
  Optional<String> lastLook(FaultKind kind) {
    return kind == FaultKind.FREEZE_LINGERER ? Optional.ofNullable(lingererLook) : Optional.empty();
  }

  /** The target of {@code kind} in {@code group} now, if there is one. */
  Optional<Workers.Worker> find(FaultKind kind, GroupSpec group) {
    return switch (kind) {
      case FREEZE_HOLDER, KILL_HOLDER, CLIENT_EXPIRY -> holder(group);
      case FREEZE_LEADER -> holder(group);
      case FREEZE_WAITER -> waiterBehindHolder(group);
      case FREEZE_LINGERER -> lingerer(group);
      case FREEZE_SERVER, FREEZE_ENSEMBLE_LEADER, SERVER_RESTART ->
          throw new IllegalArgumentException("not a process fault: " + kind);
    };
  }

  /**
   * A worker with a hold in progress that began at least 10 ms ago and has at least {@value
   * #MIN_REMAINING_MS} ms to go (two thirds of its length, in a group whose holds are all shorter).
   */
  private Optional<Workers.Worker> holder(GroupSpec group) {
    long now = System.nanoTime();
    boolean longHolds = group.pacing().holdMaxMs() > MIN_REMAINING_MS + 10;
    List<Workers.Worker> candidates = new ArrayList<>();
    for (Workers.Worker worker : workers.available(group.name())) {
      for (Event granted : history.live(worker.number()).holds()) {
        long planned = granted.longField(5);
        boolean begun = now - granted.at() >= Bounds.nanos(10);
        long minimum = longHolds ? MIN_REMAINING_MS : planned * 2 / 3;
        boolean remaining =
            planned == 0 || granted.at() + Bounds.nanos(planned) - now >= Bounds.nanos(minimum);
        if (begun && remaining && granted.field(4).equals("1")) {
          candidates.add(worker);
        }
      }
    }
    return pick(candidates);
  }

  /**
   * The worker whose node comes right after a holder's in the group's first directory, while it
   * waits (and does not hold).
   */
  private Optional<Workers.Worker> waiterBehindHolder(GroupSpec group) {
    List<Map.Entry<String, Long>> queue = queue(group.directories().get(0));
    for (int i = 1; i < queue.size(); i++) {
      Optional<Workers.Worker> ahead = owner(group, queue.get(i - 1).getValue());
      Optional<Workers.Worker> behind = owner(group, queue.get(i).getValue());
      if (ahead.isPresent()
          && behind.isPresent()
          && ahead.get() != behind.get()
          && !history.live(ahead.get().number()).holds().isEmpty()
          && history.live(behind.get().number()).waiting()
          && history.live(behind.get().number()).holds().isEmpty()) {
        return behind;
      }
    }
    return Optional.empty();
  }

  /**
   * A worker that wants and holds nothing but has a node in the group's directory, while every
   * other worker of the group wants nothing either (one that queued would take the place back at
   * once; one that wants it after the freeze finds it kept by a frozen process).
   */
  private Optional<Workers.Worker> lingerer(GroupSpec group) {
    List<Workers.Worker> members = workers.available(group.name());
    lingererLooks.incrementAndGet(0);
    StringBuilder look = new StringBuilder("members");
    for (Workers.Worker member : members) {
      History.Live live = history.live(member.number());
      look.append(' ')
          .append(member.number())
          .append(live.idle() ? " idle" : " busy")
          .append(" session ")
          .append(Long.toHexString(live.session()));
    }
    if (!members.stream().allMatch(w -> history.live(w.number()).idle())) {
      lookedForLingerer(look);
      return Optional.empty();
    }
    lingererLooks.incrementAndGet(1);
    List<Workers.Worker> candidates = new ArrayList<>();
    List<Map.Entry<String, Long>> queue = queue(group.directories().get(0));
    if (!queue.isEmpty()) {
      lingererLooks.incrementAndGet(2);
    }
    look.append("; nodes");
    for (Map.Entry<String, Long> node : queue) {
      look.append(' ').append(node.getKey()).append('=').append(Long.toHexString(node.getValue()));
      owner(group, node.getValue()).ifPresent(candidates::add);
    }
    lookedForLingerer(look);
    return pick(candidates);
  }

  private void lookedForLingerer(StringBuilder look) {
    lingererLook =
        "looks, all idle, with nodes "
            + lingererLooks
            + ", dumps unanswered "
            + watcher.unanswered()
            + "; last: "
            + look;
  }

  /** The nodes of {@code directory}, in queue order (by their sequence suffix), with owners. */
  private List<Map.Entry<String, Long>> queue(String directory) {
    List<Map.Entry<String, Long>> nodes = new ArrayList<>();
    for (Map.Entry<String, Long> node : watcher.readNow().entrySet()) {
      if (node.getKey().startsWith(directory + "/")
          && node.getKey().indexOf('/', directory.length() + 1) < 0) {
        nodes.add(node);
      }
    }
    nodes.sort(Comparator.comparing(node -> sequence(node.getKey())));
    return nodes;
  }

  private static String sequence(String path) {
    return path.length() < 10 ? path : path.substring(path.length() - 10);
  }

  private Optional<Workers.Worker> owner(GroupSpec group, long session) {
    for (Workers.Worker worker : workers.available(group.name())) {
      if (history.live(worker.number()).session() == session) {
        return Optional.of(worker);
      }
    }
    return Optional.empty();
  }

  private Optional<Workers.Worker> pick(List<Workers.Worker> candidates) {
    return candidates.isEmpty()
        ? Optional.empty()
        : Optional.of(candidates.get(random.nextInt(candidates.size())));
  }
}

package io.lockstep.faults;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

/**
 * Finds, while the run goes on, the worker a process fault aims at: one that holds, the one whose
 * node waits right behind a holder's, one that lingers, the election's leader. From the workers'
 * events (what each holds and wants now) and a fresh look at the lock directories.
 */
final class Targets {
  /**
   * A holder frozen or killed must still have this long to hold, so the fault lands in the hold.
   */
  private static final long MIN_REMAINING_MS = 150;

  private final History history;
  private final Workers workers;
  private final NodeWatcher watcher;
  private final Random random;

  Targets(History history, Workers workers, NodeWatcher watcher, Random random) {
    this.history = history;
    this.workers = workers;
    this.watcher = watcher;
    this.random = random;
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
   * #MIN_REMAINING_MS} ms (or a third of its length) to go.
   */
  private Optional<Workers.Worker> holder(GroupSpec group) {
    long now = System.nanoTime();
    List<Workers.Worker> candidates = new ArrayList<>();
    for (Workers.Worker worker : workers.available(group.name())) {
      for (Event granted : history.live(worker.number()).holds()) {
        long planned = granted.longField(5);
        boolean begun = now - granted.at() >= Bounds.nanos(10);
        long minimum = Math.min(MIN_REMAINING_MS, planned / 3);
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
    if (!members.stream().allMatch(w -> history.live(w.number()).idle())) {
      return Optional.empty();
    }
    List<Workers.Worker> candidates = new ArrayList<>();
    for (Map.Entry<String, Long> node : queue(group.directories().get(0))) {
      owner(group, node.getValue()).ifPresent(candidates::add);
    }
    return pick(candidates);
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

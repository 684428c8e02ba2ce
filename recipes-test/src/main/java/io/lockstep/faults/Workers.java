package io.lockstep.faults;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The worker processes of a run: started from their groups' members, each a {@link FaultWorker}
 * JVM, numbered in start order; which are frozen and which were killed; the group each belongs to.
 */
final class Workers {
  private static final List<String> JVM_OPTIONS =
      List.of(
          "-Xmx64m",
          "-XX:+UseSerialGC",
          "-XX:TieredStopAtLevel=1",
          "-XX:-UsePerfData",
          "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
          "-Dorg.slf4j.simpleLogger.showDateTime=true",
          "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS");

  /** One worker process. */
  record Worker(WorkerSpec spec, GroupSpec group, ChildProcesses.Child child) {
    int number() {
      return spec.worker();
    }

    String describe() {
      return "worker "
          + spec.worker()
          + " (pid "
          + child.pid()
          + ", "
          + group.name()
          + ", "
          + spec.variant()
          + ")";
    }
  }

  private final ChildProcesses children;
  private final String servers;
  private final int hubPort;
  private final boolean fencing;
  private final Random seeds; // guarded by seedLock
  private final ReentrantLock seedLock = new ReentrantLock();
  private final AtomicInteger numbers = new AtomicInteger();
  private final Map<Integer, Worker> workers = new ConcurrentHashMap<>();
  private final Set<Integer> frozen = ConcurrentHashMap.newKeySet();
  private final Map<Integer, Long> deaths = new ConcurrentHashMap<>();

  Workers(ChildProcesses children, String servers, int hubPort, boolean fencing, long seed) {
    this.children = children;
    this.servers = servers;
    this.hubPort = hubPort;
    this.fencing = fencing;
    this.seeds = new Random(seed);
  }

  /** Starts one process per member of {@code group}. */
  void start(GroupSpec group) throws IOException {
    for (int i = 0; i < group.members().size(); i++) {
      launch(
          group, group.workerSpec(i, numbers.incrementAndGet(), servers, hubPort, seed(), fencing));
    }
  }

  /** Starts a fresh process in the place of {@code dead}, with a new number and seed. */
  Worker replace(Worker dead) throws IOException {
    return launch(dead.group(), dead.spec().renumbered(numbers.incrementAndGet(), seed()));
  }

  private long seed() {
    seedLock.lock();
    try {
      return seeds.nextLong();
    } finally {
      seedLock.unlock();
    }
  }

  private Worker launch(GroupSpec group, WorkerSpec spec) throws IOException {
    ChildProcesses.Child child =
        children.start(
            "w" + spec.worker(), JVM_OPTIONS, FaultWorker.class.getName(), spec.encode());
    Worker worker = new Worker(spec, group, child);
    workers.put(spec.worker(), worker);
    return worker;
  }

  /** Every worker ever started, in number order. */
  List<Worker> all() {
    List<Worker> all = new ArrayList<>(workers.values());
    all.sort(Comparator.comparingInt(Worker::number));
    return all;
  }

  /** The workers of {@code group} that are alive and not frozen. */
  List<Worker> available(String group) {
    return all().stream()
        .filter(w -> w.group().name().equals(group))
        .filter(w -> !deaths.containsKey(w.number()) && !frozen.contains(w.number()))
        .toList();
  }

  /** The workers alive (frozen or not). */
  List<Worker> alive() {
    return all().stream().filter(w -> !deaths.containsKey(w.number())).toList();
  }

  void frozen(int number, boolean isFrozen) {
    if (isFrozen) {
      frozen.add(number);
    } else {
      frozen.remove(number);
    }
  }

  /** Records that the test process killed {@code number} at {@code nanos}. */
  void died(int number, long nanos) {
    deaths.put(number, nanos);
  }

  /** The workers the test process killed, with when. */
  Map<Integer, Long> deaths() {
    return Map.copyOf(deaths);
  }
}

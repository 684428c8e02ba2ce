package io.lockstep.faults;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Injects one fault at a time (or several at once, from several threads): finds its target, does
 * it, waits out its planned duration, heals it, and records it in the history with its stamps.
 */
final class Faults {
  /** How long a process fault looks for its target before it gives up (the fault is missed). */
  private static final Duration TARGET_SEARCH = Duration.ofSeconds(6);

  private final History history;
  private final Workers workers;
  private final ZkServers servers;
  private final ChildProcesses children;
  private final Hub hub;
  private final Targets targets;
  private final Map<String, GroupSpec> groups;
  private final Set<Integer> unavailableServers;
  private final List<String> missed = new CopyOnWriteArrayList<>();

  Faults(
      History history,
      Workers workers,
      ZkServers servers,
      ChildProcesses children,
      Hub hub,
      Targets targets,
      Map<String, GroupSpec> groups,
      Set<Integer> unavailableServers) {
    this.history = history;
    this.workers = workers;
    this.servers = servers;
    this.children = children;
    this.hub = hub;
    this.targets = targets;
    this.groups = groups;
    this.unavailableServers = unavailableServers;
  }

  /** The faults that found no target, described. */
  List<String> missed() {
    return List.copyOf(missed);
  }

  /** Injects {@code step}; empty if its target could not be found. */
  Optional<FaultRecord> inject(FaultStep step) throws InterruptedException, IOException {
    FaultRecord record = step.kind().process() ? processFault(step) : serverFault(step);
    if (record == null) {
      missed.add(
          step.kind()
              + " on "
              + step.group()
              + ": no target found"
              + targets.lastLook(step.kind()).map(look -> " (last look: " + look + ")").orElse(""));
      return Optional.empty();
    }
    history.fault(record);
    return Optional.of(record);
  }

  private FaultRecord processFault(FaultStep step) throws InterruptedException, IOException {
    GroupSpec group = groups.get(step.group());
    Workers.Worker target;
    try {
      target =
          Awaitility.await()
              .atMost(TARGET_SEARCH)
              .pollInterval(Duration.ofMillis(10))
              .until(() -> targets.find(step.kind(), group), Optional::isPresent)
              .orElseThrow();
    } catch (ConditionTimeoutException none) {
      return null;
    }
    int number = target.number();
    long session = history.live(number).session();
    String described = target.describe();
    return switch (step.kind()) {
      case KILL_HOLDER -> {
        long start = System.nanoTime();
        workers.died(number, start);
        children.kill(target.child());
        long started = System.nanoTime();
        workers.replace(target);
        yield new FaultRecord(
            step.kind(), group.name(), number, described, start, started, start, session, true);
      }
      case CLIENT_EXPIRY -> {
        long start = System.nanoTime();
        hub.command(number, "expire");
        long started = System.nanoTime();
        yield new FaultRecord(
            step.kind(), group.name(), number, described, start, started, start, session, false);
      }
      default -> {
        workers.frozen(number, true);
        long start = System.nanoTime();
        children.freeze(target.child());
        long started = System.nanoTime();
        TimeUnit.MILLISECONDS.sleep(step.durationMs()); // the fault's planned length
        children.thaw(target.child());
        long heal = System.nanoTime();
        workers.frozen(number, false);
        yield new FaultRecord(
            step.kind(),
            group.name(),
            number,
            described,
            start,
            started,
            heal,
            session,
            pastSession(step.durationMs()));
      }
    };
  }

  private FaultRecord serverFault(FaultStep step) throws InterruptedException, IOException {
    Optional<ZkServers.Server> chosen =
        switch (step.kind()) {
          case FREEZE_ENSEMBLE_LEADER -> servers.leader();
          case FREEZE_SERVER, SERVER_RESTART -> follower();
          default -> throw new IllegalArgumentException("not a server fault: " + step.kind());
        };
    if (chosen.isEmpty()) {
      return null;
    }
    ZkServers.Server server = chosen.get();
    String described = server.name() + " (port " + server.clientPort() + ")";
    unavailableServers.add(server.id());
    try {
      if (step.kind() == FaultKind.SERVER_RESTART) {
        long start = System.nanoTime();
        servers.kill(server);
        long started = System.nanoTime();
        TimeUnit.MILLISECONDS.sleep(step.durationMs()); // the planned downtime
        servers.restart(server, Duration.ofSeconds(30));
        long heal = System.nanoTime();
        return new FaultRecord(
            step.kind(),
            null,
            -1,
            described,
            start,
            started,
            heal,
            0,
            pastSession(TimeUnit.NANOSECONDS.toMillis(heal - start)));
      }
      long start = System.nanoTime();
      servers.freeze(server);
      long started = System.nanoTime();
      TimeUnit.MILLISECONDS.sleep(step.durationMs()); // the fault's planned length
      servers.thaw(server);
      long heal = System.nanoTime();
      return new FaultRecord(
          step.kind(),
          null,
          -1,
          described,
          start,
          started,
          heal,
          0,
          pastSession(step.durationMs()));
    } finally {
      unavailableServers.remove(server.id());
    }
  }

  /** The one server of a standalone run; a server that does not lead in an ensemble. */
  private Optional<ZkServers.Server> follower() {
    if (servers.servers().size() == 1) {
      return Optional.of(servers.servers().get(0));
    }
    Optional<ZkServers.Server> leader = servers.leader();
    return servers.servers().stream().filter(s -> leader.map(l -> l != s).orElse(true)).findFirst();
  }

  /** Whether a freeze of {@code ms} outlasts any session: the timeout and one tick more. */
  static boolean pastSession(long ms) {
    return ms > Bounds.SESSION_TIMEOUT_MS + Bounds.TICK_MS;
  }
}

package io.lockstep.faults;

import io.lockstep.testing.LockPart;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;

/** What the roles of one worker process share: its spec, client, channels and stop flag. */
final class RoleContext {
  /** How an acquire (or a wait for leadership) ended. */
  enum Outcome {
    ACQUIRED,
    TIMED_OUT,
    UNREACHABLE,
    FAILED
  }

  final WorkerSpec spec;
  final CuratorFramework client;
  final EventChannel events;
  final FencedWrites writes;
  final ConnectionWatch connection;

  /** Reports a timed call still running well after its budget, and where it is. */
  final CallWatch calls;

  /** Reads the states of leases, which have no listener, while their threads work. */
  final ScheduledExecutorService poller =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread thread = new Thread(r, "lease-state-poller");
            thread.setDaemon(true);
            return thread;
          });

  private final AtomicBoolean quiescing = new AtomicBoolean();

  RoleContext(
      WorkerSpec spec,
      CuratorFramework client,
      EventChannel events,
      FencedWrites writes,
      ConnectionWatch connection,
      CallWatch calls) {
    this.spec = spec;
    this.client = client;
    this.events = events;
    this.writes = writes;
    this.connection = connection;
    this.calls = calls;
  }

  /** The random choices of one thread of the worker. */
  Random random(int thread) {
    return new Random(spec.seed() * 31 + thread);
  }

  /** Whether the roles should finish what they are doing and stop. */
  boolean quiescing() {
    return quiescing.get();
  }

  void quiesce() {
    quiescing.set(true);
  }

  /**
   * Reports an acquire that ended: its outcome, how long it took, its budget (-1 untimed), and
   * whether the connection stayed up throughout ({@code mark} from {@link ConnectionWatch#mark}).
   */
  void attempt(String thread, Outcome outcome, long tookNanos, int budgetMs, long mark) {
    events.send(
        "attempt", thread, outcome, tookNanos, budgetMs, connection.connectedSince(mark) ? 1 : 0);
  }

  /** The parts of a hold as the events carry them: {@code MODE:path+MODE:path}. */
  static String encodeParts(List<LockPart> parts) {
    StringBuilder text = new StringBuilder();
    for (LockPart part : parts) {
      if (text.length() > 0) {
        text.append('+');
      }
      text.append(part.mode().name()).append(':').append(part.path());
    }
    return text.toString();
  }
}

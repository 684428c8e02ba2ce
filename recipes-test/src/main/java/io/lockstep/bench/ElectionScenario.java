package io.lockstep.bench;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.LeaderLayout;
import io.lockstep.recipes.leader.Leadership;
import io.lockstep.recipes.leader.LeadershipListener;
import io.lockstep.testing.Library;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.utils.CloseableUtils;

/**
 * Leader handoffs, Lockstep's {@code LeaderElection} ({@link LeaderLayout#LEADER_LATCH}) against
 * Curator's {@code LeaderLatch} (part of the {@code semaphore-election} section, with {@link
 * SemaphoreScenario}).
 *
 * <p><b>Workload.</b> N participants, each on a client (session) of its own, take part in one
 * election. Whenever one is elected, the driver makes it step down at once, and times the handoff
 * from the step-down's start to the moment the next leader knows it leads: Lockstep's leader steps
 * down with {@link Leadership#close()} (its election queues again by itself), and the next one
 * knows it leads when its {@link LeadershipListener#elected} runs; Curator's leader steps down by
 * closing its latch and starting a new one on the same client, which is what stepping down and
 * queueing again costs there, and the next one knows it leads when its {@link
 * LeaderLatchListener#isLeader()} runs. A number of handoffs are run first and not counted (every
 * participant is queued by then); the server's counters are settled before and after the counted
 * ones, so the requests and watch events per handoff are exact and include the requeue.
 *
 * <p><b>Command</b> (from the repository root; {@code --update} replaces the section's block of
 * {@code docs/benchmarks.md} and nothing else):
 *
 * <pre>
 * mvn -B -Pbench verify -DskipTests -Dbench.args="--full --only semaphore-election --update"
 * </pre>
 */
final class ElectionScenario {
  private static final Duration HANDOFF_TIMEOUT = Duration.ofSeconds(30);

  private ElectionScenario() {}

  /**
   * A run.
   *
   * @param library whose election
   * @param participants N
   * @param handoffs the handoffs counted
   * @param seconds from the first counted step-down to the last election
   * @param handoffNanos each counted handoff's time, from its step-down to the next leader's
   *     callback
   * @param traffic the ZooKeeper traffic of the counted handoffs, settled at both ends
   */
  record Result(
      Library library,
      int participants,
      int handoffs,
      double seconds,
      Histogram handoffNanos,
      ServerCounters.Traffic traffic) {

    double handoffsPerSecond() {
      return handoffs / seconds;
    }

    /** A handoff time percentile, in milliseconds. */
    double millis(double percentile) {
      return LoadResult.millis(handoffNanos, percentile);
    }

    double requestsPerHandoff() {
      return (double) traffic.requests() / handoffs;
    }

    double writesPerHandoff() {
      return (double) traffic.writes() / handoffs;
    }

    double watchesPerHandoff() {
      return (double) traffic.watchesFired() / handoffs;
    }
  }

  /** The class each library's election is, for tables. */
  static String className(Library library) {
    return library == Library.CURATOR ? "`LeaderLatch`" : "`LeaderElection` (`LEADER_LATCH`)";
  }

  /** How a leader steps down. */
  @FunctionalInterface
  private interface StepDown {
    void run() throws Exception;
  }

  /** A participant that heard it leads, when, and how it steps down. */
  private record Elected(int participant, long nanos, StepDown stepDown) {}

  /** The participants of one library, started on their clients. */
  private interface Participants extends AutoCloseable {
    @Override
    void close();
  }

  /**
   * Runs {@code warmUp} handoffs, then {@code handoffs} counted ones, among {@code participants}
   * participants of {@code library}.
   */
  static Result run(
      ServerProbe probe,
      String connect,
      Library library,
      int participants,
      int warmUp,
      int handoffs)
      throws Exception {
    if (participants < 2 || handoffs < 1 || warmUp < 0) {
      throw new IllegalArgumentException(
          "at least 2 participants and 1 handoff: " + participants + ", " + handoffs);
    }
    String path = Paths.unique("election");
    BlockingQueue<Elected> elected = new LinkedBlockingQueue<>();
    try (Clients clients = new Clients(connect, participants)) {
      BenchZooKeeper.createDirectories(clients.get(0), List.of(path));
      try (Participants started =
          library == Library.CURATOR
              ? curator(clients, path, participants, elected)
              : lockstep(clients, path, participants, elected)) {
        Elected leader = next(elected);
        for (int i = 0; i < warmUp; i++) {
          leader = handoff(leader, elected);
        }
        ServerCounters before = probe.settled();
        Histogram times = LoadRun.newHistogram();
        long first = System.nanoTime();
        for (int i = 0; i < handoffs; i++) {
          long stepDown = System.nanoTime();
          leader = handoff(leader, elected);
          times.recordValue(Math.max(0, leader.nanos() - stepDown));
        }
        double seconds = (leader.nanos() - first) / 1e9;
        ServerCounters.Traffic traffic = probe.settled().since(before);
        return new Result(library, participants, handoffs, seconds, times, traffic);
      }
    }
  }

  /** Makes {@code leader} step down and returns the next leader, another participant. */
  private static Elected handoff(Elected leader, BlockingQueue<Elected> elected) throws Exception {
    leader.stepDown().run();
    Elected next = next(elected);
    if (next.participant() == leader.participant()) {
      throw new IllegalStateException(
          "participant " + leader.participant() + " was elected again after stepping down");
    }
    return next;
  }

  private static Elected next(BlockingQueue<Elected> elected) throws InterruptedException {
    Elected next = elected.poll(HANDOFF_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    if (next == null) {
      throw new IllegalStateException("no leader elected within " + HANDOFF_TIMEOUT);
    }
    return next;
  }

  private static Participants lockstep(
      Clients clients, String path, int participants, BlockingQueue<Elected> elected) {
    List<LeaderElection> elections = new ArrayList<>();
    for (int i = 0; i < participants; i++) {
      int participant = i;
      LeaderElection election =
          LeaderElection.builder(clients.get(i), path)
              .participantId("participant-" + i)
              .layout(LeaderLayout.LEADER_LATCH)
              .build();
      election.addListener(
          new LeadershipListener() {
            @Override
            public void elected(Leadership leadership) {
              elected.add(new Elected(participant, System.nanoTime(), leadership::close));
            }
          });
      elections.add(election);
      election.start();
    }
    return () -> elections.forEach(LeaderElection::close);
  }

  private static Participants curator(
      Clients clients, String path, int participants, BlockingQueue<Elected> elected)
      throws Exception {
    LeaderLatch[] latches = new LeaderLatch[participants];
    for (int i = 0; i < participants; i++) {
      latches[i] = startLatch(clients, path, i, latches, elected);
    }
    return () -> {
      for (LeaderLatch latch : latches) {
        CloseableUtils.closeQuietly(latch);
      }
    };
  }

  /**
   * A started latch for participant {@code i}; stepping down closes it and starts the next one on
   * the same client.
   */
  private static LeaderLatch startLatch(
      Clients clients, String path, int i, LeaderLatch[] latches, BlockingQueue<Elected> elected)
      throws Exception {
    CuratorFramework client = clients.get(i);
    LeaderLatch latch = new LeaderLatch(client, path, "participant-" + i);
    latch.addListener(
        new LeaderLatchListener() {
          @Override
          public void isLeader() {
            elected.add(
                new Elected(
                    i,
                    System.nanoTime(),
                    () -> {
                      latches[i].close();
                      latches[i] = startLatch(clients, path, i, latches, elected);
                    }));
          }

          @Override
          public void notLeader() {}
        });
    latch.start();
    return latch;
  }
}

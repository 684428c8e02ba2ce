package io.lockstep.chaos;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.Leadership;
import io.lockstep.recipes.leader.LeadershipListener;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.ExclusionChecker;
import io.lockstep.testing.FencedStore;
import io.lockstep.testing.LockPart;
import io.lockstep.testkit.internal.Sessions;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.api.transaction.OperationType;

/**
 * A client's participant in the run's one election, for the whole run: a {@link LeaderElection} on
 * {@link #PATH}, built on the client's current Curator client and rebuilt (the old one closed
 * first) when the schedule replaces that client. While it leads, its thread writes under the
 * leadership's epoch to the fenced resource and to {@link #DATA_NODE} behind the leadership's
 * ownership checks, and now and then steps down ({@link Leadership#close()}) so that leadership
 * moves.
 *
 * <p>Each leadership is an exclusive hold of {@link #PATH} in the run's {@link ExclusionChecker},
 * kept in step by the election's listener as a lock's by its {@code HoldListener}: begun on {@code
 * elected}, paused on {@code atRisk}, resumed on {@code restored}, ended on {@code lost} (or just
 * before the leader steps down or closes the election). So the lock checks apply to leaders: no two
 * counting leaderships overlap, epochs follow the order of the leaderships, the resource refuses no
 * current leader; {@link ElectionChecks} adds that no two leaderships share an epoch and that no
 * write commits after a newer epoch was elected.
 */
final class ElectionWorkload implements Runnable {
  static final String PATH = "/chaos/leader";
  static final String DATA_NODE = "/chaos-data/leader";

  /** Stands for the participant in its client's {@link ChaosRun.Client#holding} while it leads. */
  private static final int LEADER = -1;

  private static final List<LockPart> PARTS = List.of(LockPart.mutex(PATH));
  private static final long AWAIT_MS = 250;

  private final ChaosRun run;
  private final ChaosRun.Client client;
  private final Random random;
  private final String holderName;
  private final Map<Leadership, ExclusionChecker.Hold> terms = new ConcurrentHashMap<>();
  private LeaderElection election;
  private CuratorFramework electionCurator;

  ElectionWorkload(ChaosRun run, ChaosRun.Client client, Random random) {
    this.run = run;
    this.client = client;
    this.random = random;
    this.holderName = "client" + client.id + "/leader";
  }

  @Override
  public void run() {
    try {
      while (!run.stopping.get()) {
        ensureElection();
        long start = System.nanoTime();
        Optional<Leadership> next;
        try {
          next = election.awaitLeadership(Duration.ofMillis(AWAIT_MS));
        } catch (IllegalStateException notStartedOrClosed) {
          next = Optional.empty(); // started on a client the schedule closed: rebuilt soon
          TimeUnit.MILLISECONDS.sleep(50);
        }
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        if (tookMs > AWAIT_MS + Workload.GRACE_MS) {
          run.tally.violation(holderName + " awaitLeadership(" + AWAIT_MS + " ms) took " + tookMs);
        }
        if (next.isPresent()) {
          lead(next.get());
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      run.tally.violation(holderName + " failed unexpectedly: " + e);
    } finally {
      closeElection();
    }
  }

  /** A participant on the client's current Curator client; the old one closed first. */
  private void ensureElection() {
    CuratorFramework curator = client.curator();
    if (election != null && curator == electionCurator) {
      return;
    }
    if (election != null) {
      closeElection();
      run.tally.electionsRebuilt.increment();
    }
    election = LeaderElection.builder(curator, PATH).participantId("client" + client.id).build();
    electionCurator = curator;
    election.addListener(new Listener(curator));
    try {
      election.start();
    } catch (IllegalStateException | LockException closedAlready) {
      // the schedule closed this client between our read and the start: rebuilt on the next one
    }
  }

  private void closeElection() {
    if (election == null) {
      return;
    }
    terms.values().forEach(run.checker::end); // about to give up whatever it leads
    long start = System.nanoTime();
    try {
      election.close();
    } catch (RuntimeException e) {
      run.tally.violation(holderName + " could not close " + election + ": " + e);
    }
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    if (tookMs > Workload.RELEASE_WATCHDOG_MS) {
      run.tally.violation(holderName + " closing the election took " + tookMs + " ms");
    }
    election = null;
  }

  /** Works as leader until the leadership ends, the client is replaced, or it steps down. */
  private void lead(Leadership leadership) throws InterruptedException {
    ExclusionChecker.Hold hold = null;
    for (int i = 0; i < 400 && hold == null; i++) { // its elected callback may be on its way
      hold = terms.get(leadership);
      if (hold == null) {
        if (ended(leadership)) {
          return; // lost (or its token unreadable) before it could work
        }
        TimeUnit.MILLISECONDS.sleep(5);
      }
    }
    if (hold == null) {
      run.tally.violation(holderName + " was not told it was elected within 2 s: " + leadership);
      return;
    }
    long epoch;
    try {
      epoch = leadership.fencingToken();
    } catch (RuntimeException lostOrClosed) {
      return;
    }
    client.holding.add(LEADER);
    try {
      while (!run.stopping.get() && client.curator() == electionCurator) {
        if (ended(leadership)) {
          return;
        }
        writeFenced(leadership, hold, epoch);
        TimeUnit.MILLISECONDS.sleep(20 + random.nextInt(180));
        if (random.nextInt(15) == 0) {
          stepDown(leadership, hold);
          return;
        }
      }
    } finally {
      client.holding.remove(LEADER);
    }
  }

  private static boolean ended(Leadership leadership) {
    LockState state = leadership.state();
    return state == LockState.LOST || state == LockState.RELEASED;
  }

  private void stepDown(Leadership leadership, ExclusionChecker.Hold hold) {
    run.checker.end(hold);
    run.tally.relinquished.increment();
    long start = System.nanoTime();
    try {
      leadership.close();
    } catch (RuntimeException e) {
      run.tally.violation(holderName + " could not step down: " + e);
    }
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    if (tookMs > Workload.RELEASE_WATCHDOG_MS) {
      run.tally.violation(holderName + " stepping down took " + tookMs + " ms");
    }
  }

  /** Writes the fenced resource under the epoch, then ZooKeeper behind the ownership checks. */
  private void writeFenced(Leadership leadership, ExclusionChecker.Hold hold, long epoch) {
    if (run.fenced.write(PATH, epoch)) {
      run.tally.leaderWritesAccepted.increment();
    } else {
      run.tally.leaderWritesRefused.increment();
      run.refusals.add(
          new ChaosRun.Refusal(PATH, epoch, System.nanoTime(), run.checker.isCounting(hold)));
    }
    try {
      CuratorFramework curator = electionCurator;
      byte[] data = ByteBuffer.allocate(Long.BYTES).putLong(epoch).array();
      FencedStore.Committed committed =
          FencedStore.prepare(
                  leadership, List.of(curator.transactionOp().setData().forPath(DATA_NODE, data)))
              .commit(curator);
      switch (committed.outcome()) {
        case COMMITTED -> {
          for (CuratorTransactionResult result : committed.results()) {
            if (result.getType() == OperationType.SET_DATA) {
              run.commits.add(
                  new ChaosRun.Commit(DATA_NODE, epoch, result.getResultStat().getMzxid()));
            }
          }
          run.tally.leaderZkCommitted.increment();
        }
        case SKIPPED, REFUSED -> run.tally.leaderZkRefused.increment();
      }
    } catch (Exception e) {
      run.tally.leaderZkUnsure.increment(); // connection lost, the client closed, or stepped down
    }
  }

  /** Keeps the leaderships of one election in step in the history, and counts them. */
  private final class Listener implements LeadershipListener {
    private final CuratorFramework curator;

    Listener(CuratorFramework curator) {
      this.curator = curator;
    }

    @Override
    public void elected(Leadership leadership) {
      run.tally.elected.increment();
      long epoch;
      try {
        epoch = leadership.fencingToken();
      } catch (RuntimeException lostAlready) {
        return; // never counted: nothing to check but what it wrote, and it wrote nothing
      }
      run.elections.add(new ElectionChecks.Elected(epoch, holderName, System.nanoTime()));
      long session = Sessions.id(curator);
      boolean counting = session != 0 && leadership.state() == LockState.HELD;
      terms.put(leadership, run.checker.begin(holderName, PARTS, epoch, session, counting));
    }

    @Override
    public void atRisk(Leadership leadership) {
      run.tally.leaderAtRisk.increment();
      ExclusionChecker.Hold hold = terms.get(leadership);
      if (hold != null) {
        run.checker.pause(hold);
      }
    }

    @Override
    public void restored(Leadership leadership) {
      run.tally.leaderRestored.increment();
      ExclusionChecker.Hold hold = terms.get(leadership);
      if (hold != null) {
        run.checker.resume(hold);
      }
    }

    @Override
    public void lost(Leadership leadership) {
      if (leadership.state() == LockState.LOST) {
        run.tally.leadershipsLost.increment();
      }
      ExclusionChecker.Hold hold = terms.remove(leadership);
      if (hold != null) {
        run.checker.end(hold);
      }
    }
  }
}

package io.lockstep.chaos;

import io.lockstep.testing.FaultInjector;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.curator.test.InstanceSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The chaos run's faults at seeded random moments, every 1.5 to 4 seconds, through the shared
 * {@link FaultInjector}: kill and restart a server (sometimes the leader), expire a client's
 * session, cut a client off from the whole ensemble (with resets, or silently) and heal it, slow a
 * client's links.
 *
 * <p>With {@link ChaosRun.Config#clientFaults()}, also the faults that found engine bugs the others
 * missed: close a client while its workers wait or hold, and start a fresh one in its place; do the
 * same with the fresh client's links cut off or slow at its start, so that its first connect is
 * slow while its workers already acquire; lose the answer to a worker's create.
 */
final class FaultSchedule implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(FaultSchedule.class);

  /** The faults; the client faults come last, so a run without them draws as before. */
  private static final int CLASSIC_FAULTS = 11;

  private static final int CLIENT_FAULTS = 5;

  private final ChaosRun run;
  private final FaultInjector faults;
  private final Random random;

  FaultSchedule(ChaosRun run, FaultInjector faults, Random random) {
    this.run = run;
    this.faults = faults;
    this.random = random;
  }

  @Override
  public void run() {
    try {
      while (!run.stopping.get()) {
        TimeUnit.MILLISECONDS.sleep(1_500 + random.nextInt(2_500)); // the schedule's pacing
        if (!run.stopping.get()) {
          inject();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      run.tally.violation("fault injection failed: " + e);
    }
  }

  private void inject() throws Exception {
    int pick = random.nextInt(CLASSIC_FAULTS + (run.config.clientFaults() ? CLIENT_FAULTS : 0));
    if (pick < 3) {
      killServer(pick == 0);
    } else if (pick < 5) {
      expireSession(target(ChaosRun.Client::busy));
    } else if (pick < 7) {
      partition(target(ChaosRun.Client::busy), true);
    } else if (pick < 9) {
      partition(target(ChaosRun.Client::busy), false);
    } else if (pick < CLASSIC_FAULTS) {
      slowDown(target(ChaosRun.Client::busy));
    } else if (pick == CLASSIC_FAULTS) {
      closeClient(target(ChaosRun.Client::busy));
    } else if (pick == CLASSIC_FAULTS + 1) {
      slowFirstConnect(target(client -> true));
    } else {
      loseCreateAnswer(target(client -> client.acquiring.get() > 0));
    }
  }

  /**
   * A client to hit: three times in four one that matches {@code wanted} (in slow work, if any such
   * client is), when there is one, since a fault that lands on a holder or a waiter is the one that
   * tests loss and fencing.
   */
  private ChaosRun.Client target(Predicate<ChaosRun.Client> wanted) {
    List<ChaosRun.Client> slow =
        run.clients.stream().filter(wanted).filter(c -> !c.slowHolds.isEmpty()).toList();
    List<ChaosRun.Client> matching = run.clients.stream().filter(wanted).toList();
    List<ChaosRun.Client> targets = slow.isEmpty() ? matching : slow;
    if (!targets.isEmpty() && random.nextInt(4) != 0) {
      return targets.get(random.nextInt(targets.size()));
    }
    return run.clients.get(random.nextInt(run.clients.size()));
  }

  private void killServer(boolean leader) throws Exception {
    List<InstanceSpec> servers = run.ensemble().servers();
    boolean killed =
        leader
            ? faults.killLeader().isPresent()
            : faults.killServer(servers.get(random.nextInt(servers.size())));
    if (killed) {
      run.tally.serverKills.increment();
      if (leader) {
        run.tally.leaderKills.increment();
      }
      faults.restartDownServerAfter(Duration.ofMillis(1_000 + random.nextInt(4_000)));
    }
  }

  /**
   * Expires the client's session on the server, as a long pause would. The client's holds end now
   * in the history: it cannot be told in time, and fencing is what must protect the resource from
   * its late writes.
   */
  private void expireSession(ChaosRun.Client client) throws Exception {
    run.checker.sessionEnds(Sessions.id(client.curator()));
    var unused = faults.expireSession(client.curator());
    run.tally.sessionExpiries.increment();
  }

  /**
   * Cuts the client off; half the partitions end within the session timeout (the session survives),
   * half outlast it (the session expires on the server and the lock passes on).
   */
  private void partition(ChaosRun.Client client, boolean withResets) {
    long lengthMs =
        random.nextBoolean()
            ? 1_000 + random.nextInt(3_000)
            : ChaosRun.SESSION_TIMEOUT_MS + 1_000 + random.nextInt(4_000);
    if (faults.cutOff(client.links, withResets, Duration.ofMillis(lengthMs))) {
      (withResets ? run.tally.partitionsCut : run.tally.partitionsSilent).increment();
    }
  }

  private void slowDown(ChaosRun.Client client) {
    faults.slowDown(
        client.links, 20 + random.nextInt(130), Duration.ofMillis(2_000 + random.nextInt(4_000)));
    run.tally.slowLinks.increment();
  }

  /** Closes the client under its workers and starts a fresh one in its place. */
  private void closeClient(ChaosRun.Client client) {
    log.info("chaos: closing client {}", client.id);
    run.closeClient(client);
    run.startClient(client);
    run.tally.clientCloses.increment();
  }

  /**
   * Closes the client and starts a fresh one whose links are silent or slow at its start: its
   * workers acquire on it before its first connect has completed.
   */
  private void slowFirstConnect(ChaosRun.Client client) {
    run.closeClient(client);
    boolean silent =
        random.nextBoolean()
            && faults.cutOff(client.links, false, Duration.ofMillis(1_000 + random.nextInt(4_000)));
    if (!silent) {
      faults.slowDown(
          client.links,
          300 + random.nextInt(1_200),
          Duration.ofMillis(2_000 + random.nextInt(4_000)));
    }
    log.info("chaos: new client {} behind {} links", client.id, silent ? "silent" : "slow");
    run.startClient(client);
    run.tally.slowFirstConnects.increment();
  }

  /** The next worker of the client to acquire loses the answer to its create. */
  private void loseCreateAnswer(ChaosRun.Client client) {
    log.info("chaos: the next acquire of client {} loses its create's answer", client.id);
    client.loseNextAnswer.set(true);
  }
}

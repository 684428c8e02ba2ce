package io.lockstep.demo;

import io.lockstep.demo.Bank.Balance;
import io.lockstep.demo.Workload.Instance;
import io.lockstep.recipes.fence.StaleFencingTokenException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.Ensemble;
import io.lockstep.testing.ExclusionChecker;
import io.lockstep.testing.FaultInjector;
import io.lockstep.testing.Guard;
import io.lockstep.testing.HoldListener;
import io.lockstep.testing.Library;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;

/**
 * The fault phase of a run (on unless {@code --no-faults}), injected with the {@link FaultInjector}
 * the chaos test uses too. It begins a third of the way into the run and plays its faults one after
 * another, each once the one before has played out, so that every run shows the same story:
 *
 * <ol>
 *   <li>the server that instance 1 is connected to is killed (embedded ensemble only); its clients
 *       fail over to the other two, and their locks go at risk and come back;
 *   <li>after a short outage ({@link #outage}: 4 s, less in a short run) that server is restarted;
 *   <li>a paused holder: the last instance takes one account's lock, reads the account, prepares
 *       its write with the fencing token it holds, and stalls; meanwhile its session is expired on
 *       the server, the instance's holds are lost, and ZooKeeper hands the lock to the next waiter,
 *       whose transaction admits its greater token and writes the account. When the stalled holder
 *       resumes and commits what it prepared, the database refuses its token ({@code JdbcFence})
 *       and rolls the write back; Curator's unfenced write goes through and overwrites the newer
 *       balance.
 * </ol>
 *
 * <p>The rest of the run shows the recovery. Every step says what it did, or why it could not: the
 * figures are never made up (a holder that cannot take a lock within 30 s is no paused holder).
 */
final class FaultPhase implements AutoCloseable {
  private static final Duration ACQUIRE_TRY = Duration.ofSeconds(10);
  private static final int ACQUIRE_TRIES = 3;
  private static final Duration WAIT_FOR_LOSS = Duration.ofSeconds(20);
  private static final Duration WAIT_FOR_OVERWRITE = Duration.ofSeconds(10);
  private static final Duration LONGEST =
      ACQUIRE_TRY
          .multipliedBy(ACQUIRE_TRIES)
          .plus(WAIT_FOR_LOSS)
          .plus(WAIT_FOR_OVERWRITE)
          .plusSeconds(60);

  /** Everything the faults act on. */
  record Scene(
      Ensemble ensemble,
      List<Instance> instances,
      Bank bank,
      Library library,
      Metrics metrics,
      ExclusionChecker checker) {}

  private final Scene scene;
  private final Console console;
  private final long start;
  private final Duration duration;
  private final ScheduledExecutorService scheduler;
  private final FaultInjector faults;
  private ScheduledFuture<?> phase; // set once by start(), before anyone else sees this

  private FaultPhase(Scene scene, Console console, long start, Duration duration) {
    this.scene = scene;
    this.console = console;
    this.start = start;
    this.duration = duration;
    this.scheduler = Executors.newSingleThreadScheduledExecutor(Daemons.named("demo-faults"));
    this.faults = new FaultInjector(scene.ensemble(), 0);
  }

  /** When the phase begins, from the start of the run: a third of the way in. */
  static Duration begins(Duration duration) {
    return duration.dividedBy(3);
  }

  /** How long the killed server stays down: a tenth of the run, from 1 s to 4 s. */
  static Duration outage(Duration duration) {
    Duration tenth = duration.dividedBy(10);
    Duration shortest = Duration.ofSeconds(1);
    Duration longest = Duration.ofSeconds(4);
    return tenth.compareTo(shortest) < 0
        ? shortest
        : tenth.compareTo(longest) > 0 ? longest : tenth;
  }

  /** Schedules the phase of a run that began at {@code start} ({@link System#nanoTime()}). */
  static FaultPhase start(Scene scene, Console console, long start, Duration duration) {
    FaultPhase faults = new FaultPhase(scene, console, start, duration);
    long delay = start + begins(duration).toNanos() - System.nanoTime();
    faults.phase =
        faults.scheduler.schedule(
            () -> {
              faults.play();
              return null;
            },
            Math.max(0, delay),
            TimeUnit.NANOSECONDS);
    return faults;
  }

  /** Waits for the phase to have played out. */
  void finish() throws InterruptedException {
    try {
      phase.get(LONGEST.toSeconds(), TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      say("the fault phase failed: " + e.getCause());
      scene.metrics().problem("the fault phase failed: " + e.getCause());
    } catch (TimeoutException e) {
      say("the fault phase took too long and was abandoned");
      phase.cancel(true);
    }
  }

  @Override
  public void close() throws Exception {
    scheduler.shutdownNow();
    var unused = scheduler.awaitTermination(10, TimeUnit.SECONDS);
    faults.close(); // restarts a server still down
  }

  private void play() throws InterruptedException {
    long begun = System.nanoTime();
    if (scene.ensemble().canKillServers()) {
      if (step("kill a server", this::killServer)) {
        TimeUnit.NANOSECONDS.sleep(outage(duration).toNanos());
        var unused = step("restart the server", this::restartServer);
      }
    } else {
      say("the ensemble is not ours, so no server is killed; a session is still expired");
    }
    var unused = step("set up a paused holder", this::pausedHolder);
    console.line(
        String.format(
            "  [%3ds] fault phase over after %s; the rest of the run shows the recovery",
            TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start),
            Report.seconds(System.nanoTime() - begun)));
  }

  /** Runs one fault; says why it failed if it did. */
  private boolean step(String what, Fault fault) throws InterruptedException {
    try {
      return fault.run();
    } catch (InterruptedException e) {
      throw e;
    } catch (Exception e) {
      say("could not " + what + ": " + e);
      scene.metrics().problem("the fault phase could not " + what + ": " + e);
      return false;
    }
  }

  /** One fault; true if it was injected. */
  @FunctionalInterface
  private interface Fault {
    boolean run() throws Exception;
  }

  private boolean killServer() throws Exception {
    Instance first = scene.instances().get(0);
    Optional<InstanceSpec> server = scene.ensemble().serverOf(first.client());
    if (server.isEmpty()) {
      say("instance 1 is between servers; no server killed");
      return false;
    }
    if (!faults.killServer(server.get())) {
      return false;
    }
    scene.metrics().faults.increment();
    say(
        String.format(
            "killed server %s, instance 1's server; its clients fail over to the other two",
            server.get().getConnectString()));
    return true;
  }

  private boolean restartServer() throws Exception {
    Optional<InstanceSpec> server = faults.restartDownServer();
    server.ifPresent(spec -> say("restarted server " + spec.getConnectString()));
    return server.isPresent();
  }

  /** A holder stalls past its session's end, then writes with what it prepared before. */
  private boolean pausedHolder() throws Exception {
    Instance victim = scene.instances().get(scene.instances().size() - 1);
    CuratorFramework client = victim.client();
    Bank bank = scene.bank();
    CompletableFuture<Void> lost = new CompletableFuture<>();
    HoldListener holds = new HoldListener(scene.checker());
    int account = -1;
    Guard guard = null;
    for (int tries = 0; tries < ACQUIRE_TRIES && guard == null; tries++) {
      account = ThreadLocalRandom.current().nextInt(bank.accounts());
      Guard candidate =
          Guard.of(
              scene.library(),
              client,
              bank.accountPart(Operation.RESERVE, scene.library(), account));
      candidate.addStateListener(
          change -> {
            scene.metrics().heard(change.state());
            if (change.state() == LockState.LOST) {
              lost.complete(null);
            }
          });
      candidate.addStateListener(holds);
      if (candidate.acquire(ACQUIRE_TRY)) {
        guard = candidate;
      }
    }
    if (guard == null) {
      say(
          String.format(
              "instance %d could take no account's lock within %d tries of %d s; no paused holder",
              victim.id(), ACQUIRE_TRIES, ACQUIRE_TRY.toSeconds()));
      return false;
    }
    String name = Bank.name(account);
    try {
      long session = Sessions.id(client);
      Operations.begin(holds, guard, "paused holder, instance " + victim.id(), client);
      try {
        // it reads and computes its write while it holds the lock, with the token it holds now
        Balance balance = bank.read(account);
        long version = bank.version(account);
        Bank.Prepared stale =
            bank.prepare(
                guard.fencingToken(),
                Map.of(account, balance.reserve(Math.min(7, balance.available()))));
        say(
            String.format(
                "instance %d holds %s and stalls before writing; expiring its session 0x%x",
                victim.id(), name, session));
        scene.checker().sessionEnds(session);
        faults.expireSession(client);
        scene.metrics().faults.increment();
        if (scene.library().fenced()) {
          say(
              completedWithin(lost, WAIT_FOR_LOSS)
                  ? "instance " + victim.id() + " was told: lock on " + name + " LOST"
                  : "instance "
                      + victim.id()
                      + " was not told of its loss within "
                      + WAIT_FOR_LOSS.toSeconds()
                      + " s");
        }
        boolean overwritten = bank.awaitWrite(account, version, waitForOverwrite());
        if (overwritten) {
          say(name + " was written meanwhile by its next holder");
        }
        describe(victim, name, overwritten, stale.commit());
      } finally {
        holds.end();
      }
    } finally {
      guard.release();
    }
    return true;
  }

  private void describe(Instance victim, String name, boolean overwritten, Bank.Result result) {
    String resumes = "instance " + victim.id() + " resumes and commits its prepared write to ";
    switch (result.outcome()) {
      case REFUSED -> {
        scene.metrics().refused.increment();
        StaleFencingTokenException refusal = result.refusal();
        say(
            String.format(
                "%s%s: refused by the database, token %d < %d admitted for %s"
                    + " (StaleFencingTokenException)",
                resumes, name, refusal.token(), refusal.highestAdmitted(), refusal.resource()));
      }
      case SKIPPED, DECLINED -> {
        scene.metrics().skipped.increment();
        say(resumes + name + ": not sent, the lock had reported its loss");
      }
      case COMMITTED -> {
        if (!scene.library().fenced()) {
          scene.metrics().staleCommitted.increment();
          say(resumes + name + ": committed, unfenced, over whatever its next holder wrote");
        } else if (!overwritten) {
          // no newer holder had been admitted: its token was still the newest, its read current
          scene.metrics().committed.increment();
          say(
              resumes
                  + name
                  + ": committed, as no newer holder had written "
                  + name
                  + " (the database had admitted no newer token); nothing was overwritten");
        } else {
          scene.metrics().staleCommitted.increment();
          scene.metrics().problem("the paused holder's write committed after a newer holder's");
          say(resumes + name + ": committed after its next holder's write: the fence failed");
        }
      }
    }
  }

  /** How long the stalled holder waits for someone else to write: not past the run's end. */
  private Duration waitForOverwrite() {
    long left = start + duration.toNanos() - System.nanoTime();
    return Duration.ofNanos(Math.max(0, Math.min(left, WAIT_FOR_OVERWRITE.toNanos())));
  }

  private static boolean completedWithin(CompletableFuture<Void> future, Duration timeout)
      throws InterruptedException {
    try {
      future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
      return true;
    } catch (ExecutionException | TimeoutException e) {
      return false;
    }
  }

  private void say(String text) {
    long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
    console.line(String.format("  [%3ds] fault: %s", seconds, text));
  }
}

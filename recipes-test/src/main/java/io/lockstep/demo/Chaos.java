package io.lockstep.demo;

import io.lockstep.demo.Bank.Balance;
import io.lockstep.demo.Workload.Instance;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.Ensemble;
import io.lockstep.testing.ExclusionChecker;
import io.lockstep.testing.FaultInjector;
import io.lockstep.testing.FencedStore;
import io.lockstep.testing.Guard;
import io.lockstep.testing.HoldListener;
import io.lockstep.testing.Library;
import io.lockstep.testing.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * The faults of a {@code --chaos} run, at fixed points of its duration, injected with the {@link
 * FaultInjector} the chaos test uses too:
 *
 * <ol>
 *   <li>at 25%, the server that instance 1 is connected to is killed (embedded ensemble only); its
 *       clients fail over to the other two, and their locks go at risk and come back;
 *   <li>at 45%, that server is restarted;
 *   <li>at 60%, a paused holder: the last instance takes one account's lock, prepares its write,
 *       and stalls; meanwhile its session is expired on the server, ZooKeeper hands the lock to the
 *       next waiter, who writes the account. When the stalled holder resumes and commits what it
 *       prepared, Lockstep's ownership checks make ZooKeeper refuse it; Curator's unfenced write
 *       goes through and overwrites the newer balance.
 * </ol>
 */
final class Chaos implements AutoCloseable {
  private static final Duration WAIT_FOR_LOSS = Duration.ofSeconds(20);
  private static final Duration WAIT_FOR_OVERWRITE = Duration.ofSeconds(10);

  /** Everything the faults act on. */
  record Scene(
      Ensemble ensemble,
      List<Instance> instances,
      CuratorFramework observer,
      Bank bank,
      Library library,
      Metrics metrics,
      ExclusionChecker checker) {}

  private final Scene scene;
  private final Console console;
  private final long start;
  private final Duration duration;
  private final ScheduledExecutorService scheduler;
  private final List<ScheduledFuture<?>> events = new ArrayList<>();
  private final FaultInjector faults;

  private Chaos(Scene scene, Console console, long start, Duration duration) {
    this.scene = scene;
    this.console = console;
    this.start = start;
    this.duration = duration;
    this.scheduler = Executors.newSingleThreadScheduledExecutor(Daemons.named("demo-chaos"));
    this.faults = new FaultInjector(scene.ensemble(), 0);
  }

  /** Schedules the faults of a run that began at {@code start} ({@link System#nanoTime()}). */
  static Chaos start(Scene scene, Console console, long start, Duration duration) {
    Chaos chaos = new Chaos(scene, console, start, duration);
    if (scene.ensemble().canKillServers()) {
      chaos.at(0.25, chaos::killServer);
      chaos.at(0.45, chaos::restartServer);
    } else {
      console.line(
          "chaos: the ensemble is not ours, so no server is killed; sessions still expire");
    }
    chaos.at(0.60, chaos::pausedHolder);
    return chaos;
  }

  /** Waits for every fault to have played out. */
  void finish() throws InterruptedException {
    for (ScheduledFuture<?> event : events) {
      try {
        event.get(WAIT_FOR_LOSS.plus(WAIT_FOR_OVERWRITE).toSeconds() + 30, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        say("a fault could not be injected: " + e.getCause());
      } catch (TimeoutException e) {
        say("a fault took too long and was abandoned");
        event.cancel(true);
      }
    }
  }

  @Override
  public void close() throws Exception {
    scheduler.shutdownNow();
    var unused = scheduler.awaitTermination(10, TimeUnit.SECONDS);
    faults.close(); // restarts a server still down
  }

  private void at(double fraction, ThrowingRunnable fault) {
    long delay = (long) (duration.toNanos() * fraction);
    events.add(
        scheduler.schedule(
            () -> {
              fault.run();
              return null;
            },
            delay,
            TimeUnit.NANOSECONDS));
  }

  @FunctionalInterface
  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  private void killServer() throws Exception {
    Instance first = scene.instances().get(0);
    Optional<InstanceSpec> server = scene.ensemble().serverOf(first.client());
    if (server.isEmpty()) {
      say("instance 1 is between servers; no server killed");
      return;
    }
    scene.metrics().faults.increment();
    if (faults.killServer(server.get())) {
      say("killed server " + server.get().getConnectString() + ", instance 1's server");
    }
  }

  private void restartServer() throws Exception {
    Optional<InstanceSpec> server = faults.restartDownServer();
    if (server.isPresent()) {
      say("restarted server " + server.get().getConnectString());
    }
  }

  /** A holder stalls past its session's end, then writes with what it prepared before. */
  private void pausedHolder() throws Exception {
    Instance victim = scene.instances().get(scene.instances().size() - 1);
    CuratorFramework client = victim.client();
    Bank bank = scene.bank();
    int account = ThreadLocalRandom.current().nextInt(bank.accounts());
    String name = Bank.name(account);
    Guard guard =
        Guard.of(
            scene.library(), client, bank.accountPart(Operation.RESERVE, scene.library(), account));
    CompletableFuture<Void> lost = new CompletableFuture<>();
    HoldListener holds = new HoldListener(scene.checker());
    guard.addStateListener(
        change -> {
          scene.metrics().heard(change.state());
          if (change.state() == LockState.LOST) {
            lost.complete(null);
          }
        });
    guard.addStateListener(holds);
    if (!guard.acquire(Duration.ofSeconds(10))) {
      say("instance " + victim.id() + " could not take " + name + " in time; no paused holder");
      return;
    }
    try {
      long session = Sessions.id(client);
      Operations.begin(holds, guard, "paused holder, instance " + victim.id(), client);
      try {
        Balance balance = bank.read(client, account);
        FencedStore.Transaction stale =
            FencedStore.prepare(
                guard,
                List.of(
                    bank.write(
                        client, account, balance.reserve(Math.min(7, balance.available())))));
        CompletableFuture<Void> overwritten = bank.nextChange(scene.observer(), account);
        say(
            String.format(
                "instance %d holds %s and stalls before writing; expiring its session 0x%x",
                victim.id(), name, session));
        scene.metrics().faults.increment();
        scene.checker().sessionEnds(session);
        faults.expireSession(client);
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
        if (completedWithin(overwritten, waitForOverwrite())) {
          say(name + " was written meanwhile by its next holder");
        }
        describe(victim, name, stale.commit(client).outcome());
      } finally {
        holds.end();
      }
    } finally {
      guard.release();
    }
  }

  private void describe(Instance victim, String name, FencedStore.Outcome outcome) {
    String resumes = "instance " + victim.id() + " resumes and commits its prepared write to ";
    switch (outcome) {
      case REFUSED -> {
        scene.metrics().refused.increment();
        say(resumes + name + ": refused by ZooKeeper, the ownership check failed");
      }
      case SKIPPED -> {
        scene.metrics().skipped.increment();
        say(resumes + name + ": not sent, the lock had reported its loss");
      }
      case COMMITTED -> {
        scene.metrics().staleCommitted.increment();
        say(resumes + name + ": committed, unfenced, over whatever its next holder wrote");
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
    console.line(String.format("  [%3ds] chaos: %s", seconds, text));
  }
}

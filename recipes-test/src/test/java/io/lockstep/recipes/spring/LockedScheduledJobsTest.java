package io.lockstep.recipes.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * {@link Locked} on scheduled jobs, as ShedLock's users expect it, with two instances of a service
 * (two Spring contexts, each with its own client) on one real server: the instance that finds the
 * lock held skips quietly and counts it; {@code holdAtLeast} keeps one period from running twice; a
 * time to live frees the lock of a stuck run; renewal, automatic or by heartbeat, keeps a long
 * one's; kept holds go when the context closes; and a real {@code @Scheduled} method.
 */
@Timeout(60)
class LockedScheduledJobsTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private final Ledger ledger = new Ledger();
  private final List<AnnotationConfigApplicationContext> contexts = new ArrayList<>();
  private final ExecutorService pool = Executors.newCachedThreadPool();

  /** What the jobs of both instances did. */
  static final class Ledger {
    private final List<String> runs = new CopyOnWriteArrayList<>(); // job/period@instance
    private final Map<String, LockHold> holds = new ConcurrentHashMap<>(); // job@instance
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger most = new AtomicInteger();

    void ran(String instance, String job, int period, LockHold hold) {
      most.accumulateAndGet(inside.incrementAndGet(), Math::max);
      runs.add(job + "/" + period + "@" + instance);
      holds.put(job + "@" + instance, hold);
    }

    void left() {
      inside.decrementAndGet();
    }

    long runs(String job) {
      return runs.stream().filter(run -> run.startsWith(job + "/")).count();
    }

    long runsOf(String job, int period) {
      return runs.stream().filter(run -> run.startsWith(job + "/" + period + "@")).count();
    }

    long runsBy(String instance, String job) {
      return runs.stream()
          .filter(run -> run.startsWith(job + "/") && run.endsWith("@" + instance))
          .count();
    }

    LockHold hold(String instance, String job) {
      return holds.get(job + "@" + instance);
    }

    /** The most runs of any jobs inside at once. */
    int most() {
      return most.get();
    }
  }

  /** One instance's jobs. */
  static class Jobs {
    private final String instance;
    private final Ledger ledger;

    Jobs(String instance, Ledger ledger) {
      this.instance = instance;
      this.ledger = ledger;
    }

    @Locked(key = "'report'", whenBusy = Locked.WhenBusy.SKIP, holdAtLeast = "PT2S")
    public void report(int period) {
      run("report", period, null);
    }

    @Locked(key = "'report-plain'", whenBusy = Locked.WhenBusy.SKIP)
    public void reportWithoutHoldAtLeast(int period) {
      run("plain", period, null);
    }

    @Locked(key = "'export'", whenBusy = Locked.WhenBusy.SKIP)
    public Optional<String> export(CountDownLatch release) {
      run("export", 0, release);
      return Optional.of(instance);
    }

    @Locked(key = "'export'", whenBusy = Locked.WhenBusy.SKIP)
    public String exportName() {
      run("export", 0, null);
      return instance;
    }

    @Locked(key = "'stuck'", whenBusy = Locked.WhenBusy.SKIP, ttl = "PT0.5S")
    public void stuck(CountDownLatch release) {
      run("stuck", 0, release);
    }

    @Locked(key = "'long'", whenBusy = Locked.WhenBusy.SKIP, ttl = "PT0.5S", renew = true)
    public void longRun(CountDownLatch release) {
      run("long", 0, release);
    }

    @Locked(key = "'beat'", whenBusy = Locked.WhenBusy.SKIP, ttl = "PT1S")
    public String heartbeat(AtomicBoolean beating, CountDownLatch release) {
      ledger.ran(instance, "beat", 0, LockedCall.current());
      try {
        while (!release.await(50, TimeUnit.MILLISECONDS)) { // a step of the work, then a beat
          if (beating.get()) {
            LockedCall.renew();
          }
        }
        LockedCall.renew();
        return "renewed";
      } catch (LockOwnershipLostException e) {
        return "lost: " + e.getMessage();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return "interrupted";
      } finally {
        ledger.left();
      }
    }

    @Locked(key = "'nightly'", whenBusy = Locked.WhenBusy.SKIP, holdAtLeast = "PT1M")
    public void nightly() {
      run("nightly", 0, null);
    }

    private void run(String job, int period, CountDownLatch release) {
      ledger.ran(instance, job, period, LockedCall.current());
      try {
        if (release != null) {
          assertThat(release.await(30, TimeUnit.SECONDS)).as("released").isTrue();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        ledger.left();
      }
    }
  }

  /** A job on a real schedule. */
  static class ScheduledReport {
    private final String instance;
    private final Ledger ledger;

    ScheduledReport(String instance, Ledger ledger) {
      this.instance = instance;
      this.ledger = ledger;
    }

    @Scheduled(fixedDelay = 50)
    @Locked(key = "'scheduled'", whenBusy = Locked.WhenBusy.SKIP, holdAtLeast = "PT0.3S")
    public void publish() {
      ledger.ran(instance, "scheduled", 0, LockedCall.current());
      ledger.left();
    }
  }

  /** Today's way, for contrast: a scheduled job that fails when the lock is busy. */
  static class ScheduledFailing {
    @Scheduled(fixedDelay = 50)
    @Locked(key = "'scheduled-fail'", waitFor = "PT0S")
    public void publish() {}
  }

  @Configuration(proxyBeanMethods = false)
  @EnableLockstepLocking
  static class Locking {
    @Bean
    LockstepLockRegistry registry(CuratorFramework client) {
      return new LockstepLockRegistry(client, zk.path("jobs"));
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableScheduling
  static class Scheduling {}

  /** One instance of the service: its context, its jobs, its registry, its skips. */
  record Instance(
      AnnotationConfigApplicationContext context,
      Jobs jobs,
      LockstepLockRegistry registry,
      LockedBeanPostProcessor locked) {
    LockedSkips skips() {
      return locked.skips();
    }

    /** The nodes in the queue of {@code key}'s lock, of every instance. */
    Collection<String> nodes(String key) throws Exception {
      return registry.obtain(key).fencedLock().getParticipantNodes();
    }
  }

  private Instance instance(String name) {
    return instance(name, null);
  }

  /**
   * @param scheduled a scheduled job to run, or null for none
   */
  private Instance instance(String name, Class<?> scheduled) {
    CuratorFramework client = zk.newClient();
    AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
    contexts.add(context);
    context.registerBean(CuratorFramework.class, () -> client);
    if (scheduled == ScheduledReport.class) {
      context.register(Scheduling.class); // first: its post-processor is registered first
      context.registerBean(ScheduledReport.class, () -> new ScheduledReport(name, ledger));
    } else if (scheduled != null) {
      context.register(Scheduling.class, scheduled);
    }
    context.register(Locking.class);
    context.registerBean(Jobs.class, () -> new Jobs(name, ledger));
    context.refresh();
    return new Instance(
        context,
        context.getBean(Jobs.class),
        context.getBean(LockstepLockRegistry.class),
        context.getBean(LockedBeanPostProcessor.class));
  }

  /**
   * Calls {@code call} until {@code ran}: a call that is to run may skip too on a starved machine,
   * when the first try of its one attempt gets no answer within the engine's grace (200 ms) and the
   * lock counts as busy.
   */
  private static void untilItRuns(Runnable call, BooleanSupplier ran) {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              if (!ran.getAsBoolean()) {
                call.run();
              }
              return ran.getAsBoolean();
            });
  }

  @AfterEach
  void stop() {
    contexts.forEach(AnnotationConfigApplicationContext::close);
    pool.shutdownNow();
  }

  @Test
  void whileOneInstanceRuns_theOtherSkipsQuietly_countedAndLoggedAtDebugOnly() throws Exception {
    Instance a = instance("a");
    Instance b = instance("b");
    CountDownLatch release = new CountDownLatch(1);
    try (LogCapture log = new LogCapture()) {
      CompletableFuture<Optional<String>> running =
          CompletableFuture.supplyAsync(
              () -> {
                Optional<String> ran;
                do {
                  ran = a.jobs().export(release); // runs (see untilItRuns), then waits for release
                } while (ran.isEmpty());
                return ran;
              },
              pool);
      await().until(() -> ledger.runs("export") == 1);

      assertThat(b.jobs().export(new CountDownLatch(0))).as("skipped: Optional").isEmpty();
      assertThat(b.jobs().exportName()).as("skipped: null").isNull();

      release.countDown();
      assertThat(running.get(10, TimeUnit.SECONDS)).contains("a");
      assertThat(ledger.runs("export")).isEqualTo(1);
      assertThat(b.skips().count("Jobs.export")).isEqualTo(1);
      assertThat(b.skips().count("Jobs.exportName")).isEqualTo(1);
      assertThat(b.skips().byMethod()).containsOnlyKeys("Jobs.export", "Jobs.exportName");
      assertThat(b.skips().total()).isEqualTo(2);
      assertThat(log.at("DEBUG"))
          .filteredOn(line -> line.contains("[main] DEBUG io.lockstep.recipes.spring.Locked - "))
          .hasSize(2)
          .allMatch(
              line -> line.contains("skipped: the lock of key 'export' was not granted within"));
      assertThat(log.at("ERROR")).isEmpty();
      assertThat(log.at("WARN")).noneMatch(line -> line.contains(" io.lockstep."));
    }
    untilItRuns(() -> b.jobs().exportName(), () -> ledger.runsBy("b", "export") == 1);
  }

  @Test
  void withHoldAtLeast_twoInstancesNeverRunOnePeriodTwice_withoutItBothDo() throws Exception {
    Instance a = instance("a");
    Instance b = instance("b");
    int periods = 3;
    for (int period = 0; period < periods; period++) {
      Instance early = period % 2 == 0 ? a : b;
      Instance late = period % 2 == 0 ? b : a; // its clock a little behind
      int p = period;
      untilItRuns(() -> early.jobs().report(p), () -> ledger.runsOf("report", p) == 1);
      assertThat(early.nodes("report")).as("kept after the run").hasSize(1);
      late.jobs().report(period); // the same period: skipped
      untilItRuns(
          () -> early.jobs().reportWithoutHoldAtLeast(p), () -> ledger.runsOf("plain", p) == 1);
      untilItRuns( // the same period: runs again
          () -> late.jobs().reportWithoutHoldAtLeast(p), () -> ledger.runsOf("plain", p) == 2);
      await("the kept hold is released").until(() -> early.nodes("report").isEmpty());
      assertThat(early.locked().keptHolds()).isZero();
    }
    for (int period = 0; period < periods; period++) {
      assertThat(ledger.runsOf("report", period)).as("report, period " + period).isEqualTo(1);
      assertThat(ledger.runsOf("plain", period)).as("plain, period " + period).isEqualTo(2);
    }
    assertThat(ledger.runsBy("a", "report")).isEqualTo(2);
    assertThat(ledger.runsBy("b", "report")).isEqualTo(1);
    assertThat(a.skips().count("Jobs.report") + b.skips().count("Jobs.report"))
        .isGreaterThanOrEqualTo(periods);
  }

  @Test
  void aRunStuckPastItsTtl_losesTheLock_andTheOtherInstanceRuns() throws Exception {
    Instance a = instance("a");
    Instance b = instance("b");
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Void> stuck =
        CompletableFuture.runAsync(
            () -> {
              while (ledger.runsBy("a", "stuck") == 0) {
                a.jobs().stuck(release);
              }
            },
            pool);
    await().until(() -> ledger.hold("a", "stuck") != null);
    LockHold held = ledger.hold("a", "stuck");
    CompletableFuture<LockOwnershipLostException> lost = held.whenLost().toCompletableFuture();

    await("the other instance runs once the time to live ran out")
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              b.jobs().stuck(new CountDownLatch(0));
              return ledger.runsBy("b", "stuck") == 1;
            });

    assertThat(lost.get(10, TimeUnit.SECONDS)).hasMessageContaining("time to live");
    assertThat(held.state()).isEqualTo(LockState.LOST);
    assertThat(ledger.hold("b", "stuck").state()).isEqualTo(LockState.RELEASED);
    release.countDown();
    stuck.get(10, TimeUnit.SECONDS); // the late run ends as usual
    assertThat(ledger.runsBy("a", "stuck")).isEqualTo(1);
    assertThat(a.nodes("stuck")).isEmpty();
  }

  @Test
  void withRenew_aRunLongerThanItsTtl_keepsTheLock() throws Exception {
    Instance a = instance("a");
    Instance b = instance("b");
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Void> running =
        CompletableFuture.runAsync(
            () -> {
              while (ledger.runsBy("a", "long") == 0) {
                a.jobs().longRun(release);
              }
            },
            pool);
    await().until(() -> ledger.hold("a", "long") != null);
    LockHold held = ledger.hold("a", "long");

    await("held past three times its time to live, the other instance skipping")
        .during(Duration.ofMillis(1_500))
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              b.jobs().longRun(new CountDownLatch(0));
              return held.state() == LockState.HELD && ledger.runsBy("b", "long") == 0;
            });

    release.countDown();
    running.get(10, TimeUnit.SECONDS);
    assertThat(b.skips().count("Jobs.longRun")).isPositive();
    untilItRuns(
        () -> b.jobs().longRun(new CountDownLatch(0)), () -> ledger.runsBy("b", "long") == 1);
  }

  @Test
  void withRenew_aRunCutOffFromZooKeeper_givesItsHoldUpAtItsTtl_beforeItsSessionIsLost()
      throws Exception {
    Instance a = instance("a"); // a session of 30 s: Curator declares it lost 30 s after a cut
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Void> running =
        CompletableFuture.runAsync(
            () -> {
              while (ledger.runsBy("a", "long") == 0) {
                a.jobs().longRun(release);
              }
            },
            pool);
    await().until(() -> ledger.hold("a", "long") != null);
    LockHold held = ledger.hold("a", "long");
    CompletableFuture<LockOwnershipLostException> lost = held.whenLost().toCompletableFuture();

    zk.server().stop();
    try {
      assertThat(lost.get(10, TimeUnit.SECONDS))
          .hasMessageContaining("without a renewal: its connection was suspended");
    } finally {
      zk.server().restart();
    }
    release.countDown();
    running.get(10, TimeUnit.SECONDS);
    await("the lost hold's node is deleted once the server is back")
        .atMost(Duration.ofSeconds(20))
        .until(() -> a.nodes("long").isEmpty());
  }

  @Test
  void aHeartbeat_keepsTheHold_andSilenceLosesItAtTheTtl() throws Exception {
    Instance a = instance("a");
    AtomicBoolean beating = new AtomicBoolean(true);
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<String> run =
        CompletableFuture.supplyAsync(
            () -> {
              String ended;
              do {
                ended = a.jobs().heartbeat(beating, release); // null: skipped
              } while (ended == null);
              return ended;
            },
            pool);
    await().until(() -> ledger.hold("a", "beat") != null);
    LockHold held = ledger.hold("a", "beat");

    await("held past twice its time to live while beating")
        .during(Duration.ofMillis(2_200))
        .atMost(Duration.ofSeconds(10))
        .until(() -> held.state() == LockState.HELD);
    beating.set(false); // stuck: no more beats
    await().until(() -> held.state() == LockState.LOST);

    release.countDown();
    assertThat(run.get(10, TimeUnit.SECONDS)).startsWith("lost: ").contains("time to live");
    assertThat(a.nodes("beat")).isEmpty();
  }

  @Test
  void holdsKeptForHoldAtLeast_goAtOnceWhenTheContextCloses() throws Exception {
    Instance a = instance("a");
    Instance b = instance("b");
    untilItRuns(() -> a.jobs().nightly(), () -> ledger.runsBy("a", "nightly") == 1);
    assertThat(a.locked().keptHolds()).isEqualTo(1);
    b.jobs().nightly();
    assertThat(b.skips().count("Jobs.nightly")).isEqualTo(1);

    a.context().close();

    assertThat(b.nodes("nightly")).as("released as the context closed").isEmpty();
    assertThat(a.locked().keptHolds()).isZero();
    untilItRuns(() -> b.jobs().nightly(), () -> ledger.runsBy("b", "nightly") == 1);
    assertThat(b.locked().keptHolds()).isEqualTo(1); // until b's context closes, after the test
  }

  @Test
  void aScheduledMethod_runsOnOneInstanceAtATime_theOtherSkipsWithoutAnError() throws Exception {
    try (LogCapture log = new LogCapture()) {
      Instance a = instance("a", ScheduledReport.class);
      Instance b = instance("b", ScheduledReport.class);

      await("runs, and skips by the instance that found the lock held")
          .until(
              () ->
                  ledger.runs("scheduled") >= 3
                      && a.skips().count("ScheduledReport.publish")
                              + b.skips().count("ScheduledReport.publish")
                          >= 3);
      a.context().close();
      b.context().close();

      assertThat(ledger.most()).as("never two runs at once").isEqualTo(1);
      assertThat(log.at("ERROR"))
          .as("none but a client's lost connection, which a starved machine may cause")
          .allMatch(line -> line.contains("LockUnreachableException"));
      assertThat(log.lines()).noneMatch(line -> line.contains("LockTimeoutException"));
    }
  }

  /** Counts what the scheduled calls threw, in place of Spring's handler that logs each one. */
  @Configuration(proxyBeanMethods = false)
  static class CountingErrors {
    static final List<Throwable> thrown = new CopyOnWriteArrayList<>();

    @Bean
    ThreadPoolTaskScheduler taskScheduler() {
      ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
      scheduler.setErrorHandler(thrown::add); // Spring's default handler logs each at ERROR
      return scheduler;
    }
  }

  @Test
  void forContrast_aScheduledMethodThatFailsWhenBusy_throwsEachPeriod() throws Exception {
    ReentrantMutex otherInstance =
        new ReentrantMutex(zk.newClient(), zk.path("jobs/scheduled-fail"));
    otherInstance.acquire();
    CountingErrors.thrown.clear();
    try {
      CuratorFramework client = zk.newClient();
      AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
      contexts.add(context);
      context.registerBean(CuratorFramework.class, () -> client);
      context.register(Scheduling.class, CountingErrors.class, ScheduledFailing.class);
      context.register(Locking.class);
      context.refresh();

      await("a LockTimeoutException thrown to Spring's scheduler in each of two periods")
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  CountingErrors.thrown.stream()
                          .filter(LockTimeoutException.class::isInstance)
                          .count()
                      >= 2);
      context.close();
    } finally {
      otherInstance.release();
    }
  }
}

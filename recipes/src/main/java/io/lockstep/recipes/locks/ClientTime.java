package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.LockEngine;
import io.lockstep.recipes.internal.zk.Scheduler;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;

/**
 * The clock and the scheduler that every recipe object of one Curator client runs on, for tests
 * that drive time, as Caffeine takes a {@code Ticker} and a {@code Scheduler}.
 *
 * <p>By default a client's recipe objects read time from {@link System#nanoTime()} and run their
 * timers (budgets, retry delays, the grace of a hold, time-to-live) and their notices (state
 * listeners, observers, completions of asynchronous acquires without an executor of their own) on
 * Lockstep's bounded pool of daemon threads. {@link #use} replaces both for one client, and for its
 * namespace facades: every budget and duration Lockstep reports is then read from the given ticker,
 * and every timer and notice runs on the given scheduler. ZooKeeper's own timeouts (the session,
 * the connection) still follow real time.
 *
 * <pre>{@code
 * import io.lockstep.recipes.locks.ClientTime;
 * import io.lockstep.recipes.locks.ReentrantMutex;
 * import java.util.concurrent.Executors;
 * import java.util.concurrent.ScheduledExecutorService;
 * import java.util.concurrent.atomic.AtomicLong;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * CuratorFramework client = ...; // started, no recipes made with it yet
 * AtomicLong ticker = new AtomicLong(); // the test moves time on by hand
 * ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
 * ClientTime.use(client, ticker::get, scheduler);
 * ReentrantMutex mutex = new ReentrantMutex(client, "/locks/orders");
 * }</pre>
 *
 * <p><b>Thread safety.</b> {@link #use} may be called from any thread, once per client, before the
 * first recipe object is made with that client (or one of its namespace facades); the ticker must
 * be safe to read from any thread, and never go backwards.
 *
 * @see ReentrantMutex
 */
public final class ClientTime {
  private ClientTime() {}

  /**
   * Makes every recipe object of {@code client} read time from {@code ticker} and run its timers
   * and notices on {@code scheduler}. The scheduler stays the caller's: Lockstep never shuts it
   * down, and a task it refuses is lost, so keep it running while the client lives.
   *
   * @param client the Curator client, not started or started, whose recipe objects are still to be
   *     made
   * @param ticker nanoseconds, as {@link System#nanoTime()}: only differences count
   * @param scheduler runs timers and notices
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if a recipe object was made with {@code client} already (it runs
   *     on the default clock and scheduler)
   */
  public static void use(
      CuratorFramework client, LongSupplier ticker, ScheduledExecutorService scheduler) {
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(ticker, "ticker");
    Objects.requireNonNull(scheduler, "scheduler");
    LockEngine.install(
        client,
        ticker,
        new Scheduler() {
          @Override
          public void schedule(long delayMillis, Runnable task) {
            var unused = scheduler.schedule(task, delayMillis, TimeUnit.MILLISECONDS);
          }

          @Override
          public void execute(Runnable task) {
            scheduler.execute(task);
          }
        });
  }
}

package io.lockstep.recipes.leader;

import io.lockstep.recipes.internal.zk.Scheduler;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs an election's callbacks one at a time, in the order they were submitted, on the engine's
 * scheduler: never on ZooKeeper's event thread, never in the submitting thread, no thread kept.
 */
final class SerialExecutor implements Executor {
  private static final Logger log = LoggerFactory.getLogger(SerialExecutor.class);

  private final Scheduler scheduler;
  private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger pending = new AtomicInteger();

  SerialExecutor(Scheduler scheduler) {
    this.scheduler = scheduler;
  }

  @Override
  public void execute(Runnable task) {
    queue.add(task);
    if (pending.getAndIncrement() == 0) {
      scheduler.execute(this::drain);
    }
  }

  private void drain() {
    do {
      Runnable task = queue.poll();
      try {
        task.run();
      } catch (RuntimeException | Error e) {
        log.error("A Lockstep leadership callback failed", e);
      }
    } while (pending.decrementAndGet() != 0);
  }
}

package io.lockstep.recipes.leader;

import io.lockstep.recipes.internal.engine.Notifier;
import io.lockstep.recipes.internal.zk.Scheduler;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listeners of one election and the one queue their callbacks run in: what is told here runs on
 * a Lockstep thread, one at a time, in the order it was told (the election tells under its lock, so
 * in the order its state changed).
 */
final class Announcer {
  private static final Logger log = LoggerFactory.getLogger(Announcer.class);

  private final String path;
  private final Notifier queue; // the engine's serial executor
  private final List<LeadershipListener> listeners = new CopyOnWriteArrayList<>();

  Announcer(String path, Scheduler scheduler) {
    this.path = path;
    this.queue = new Notifier(scheduler);
  }

  void add(LeadershipListener listener) {
    listeners.add(listener);
  }

  void remove(LeadershipListener listener) {
    listeners.remove(listener);
  }

  /** Tells every listener, in order with every other callback of the election. */
  void tell(Consumer<LeadershipListener> callback) {
    queue.submit(
        () -> {
          for (LeadershipListener listener : listeners) {
            try {
              callback.accept(listener);
            } catch (RuntimeException | Error e) { // the next listeners are told all the same
              log.error("A LeadershipListener of {} failed", path, e);
            }
          }
        });
  }

  /** Runs {@code task} (completing a future: user stages) in order with the callbacks. */
  void execute(Runnable task) {
    queue.submit(task);
  }
}

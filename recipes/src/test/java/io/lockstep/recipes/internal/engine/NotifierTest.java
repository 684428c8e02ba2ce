package io.lockstep.recipes.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.internal.zk.Scheduler;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Notices run one at a time, in order, off the caller's thread unless they are quiet. */
@Timeout(10)
class NotifierTest {
  /** Runs nothing until told to: the test decides when "another thread" runs. */
  private static final class ManualScheduler implements Scheduler {
    final Queue<Runnable> tasks = new ArrayDeque<>();

    @Override
    public void schedule(long delayMillis, Runnable task) {
      tasks.add(task);
    }

    @Override
    public void execute(Runnable task) {
      tasks.add(task);
    }

    void runAll() {
      Runnable task;
      while ((task = tasks.poll()) != null) {
        task.run();
      }
    }
  }

  private final ManualScheduler scheduler = new ManualScheduler();
  private final Notifier notifier = new Notifier(scheduler);
  private final List<String> heard = new CopyOnWriteArrayList<>();

  @Test
  void notices_runOnTheScheduler_inTheOrderSubmitted() {
    notifier.submit(() -> heard.add("HELD"));
    notifier.submit(() -> heard.add("AT_RISK"));
    assertThat(heard).isEmpty();

    scheduler.runAll();

    assertThat(heard).containsExactly("HELD", "AT_RISK");
    assertThat(scheduler.tasks).isEmpty();
  }

  @Test
  void aQuietNotice_runsHereWhenIdle_butWaitsBehindQueuedNotices() {
    notifier.submitQuiet(() -> heard.add("woken"));
    assertThat(heard).containsExactly("woken");

    notifier.submit(() -> heard.add("HELD"));
    notifier.submitQuiet(() -> heard.add("woken again"));
    assertThat(heard).containsExactly("woken");

    scheduler.runAll();
    assertThat(heard).containsExactly("woken", "HELD", "woken again");
  }

  @Test
  void deliverNow_fromInsideANotice_queuesBehindIt_insteadOfWaitingForItself() {
    notifier.submit(
        () -> {
          heard.add("LOST");
          notifier.deliverNow(() -> heard.add("RELEASED"));
          heard.add("listener returned");
        });

    scheduler.runAll();

    assertThat(heard).containsExactly("LOST", "listener returned", "RELEASED");
  }

  @Test
  void aFailingNotice_doesNotStopTheOnesAfterIt() {
    notifier.submit(
        () -> {
          throw new IllegalStateException("listener bug");
        });
    notifier.submit(() -> heard.add("next"));

    scheduler.runAll();

    assertThat(heard).containsExactly("next");
  }
}

package io.lockstep.recipes.internal.engine;

import static io.lockstep.recipes.internal.ModelCheck.check;
import static io.lockstep.recipes.internal.ModelCheck.explore;
import static io.lockstep.recipes.internal.ModelCheck.inParallel;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The outbox's drain over every interleaving Lincheck's model checker explores, where {@link
 * OutboxTest} can only race threads and hope: each step runs exactly once, never two at once, in
 * the order decided. Two ways of adding are checked, as the engine uses them: under the owner's
 * lock (an acquisition, a place, a lease, an election), and with no lock, beside a notice that runs
 * in the calling thread if the outbox is idle ({@link Notifier}). Each of three one-line breaks
 * made on purpose fails it: a step counted before it is queued, a drain's first step not cleared, a
 * run-here that forgets the steps added while it ran.
 */
@Timeout(120)
class OutboxModelTest {
  /** What the runner saw: the steps in the order they ran, and whether two ever ran at once. */
  private static final class Log {
    final List<String> ran = new ArrayList<>();
    final AtomicInteger running = new AtomicInteger();
    volatile boolean overlapped;

    void run(String step) {
      if (running.incrementAndGet() != 1) {
        overlapped = true;
      }
      ran.add(step);
      running.decrementAndGet();
    }
  }

  @Test
  void stepsAddedUnderTheOwnersLock_runOnceEach_oneAtATime_inTheOrderDecided() {
    explore(
        () -> {
          ReentrantLock ownerLock = new ReentrantLock();
          List<String> decided = new ArrayList<>(); // the order of the adds, under the lock
          Log log = new Log();
          List<Outbox<String>> self = new ArrayList<>(1);
          Outbox<String> outbox =
              new Outbox<>(
                  step -> {
                    log.run(step);
                    if (step.equals("a1")) { // a step that leads to a new event, decided now
                      ownerLock.lock();
                      try {
                        decided.add("a1+");
                        check(!self.get(0).add("a1+"), "the drain under way runs it");
                      } finally {
                        ownerLock.unlock();
                      }
                    }
                  });
          self.add(outbox);

          inParallel(
              () -> addUnderLock(outbox, ownerLock, decided, "a1", "a2"),
              () -> addUnderLock(outbox, ownerLock, decided, "b1", "b2"));

          check(!log.overlapped, "two steps ran at once");
          check(log.ran.size() == 5, "every step ran once: " + log.ran);
          check(log.ran.equals(decided), "ran " + log.ran + ", decided " + decided);
        });
  }

  @Test
  void noticesAddedWithNoLock_besideOneRunHereIfIdle_runOnceEach_oneAtATime_eachInItsOrder() {
    explore(
        () -> {
          Log log = new Log();
          Outbox<String> outbox = new Outbox<>(log::run);

          inParallel(
              () -> {
                for (String notice : List.of("q1", "q2")) {
                  if (outbox.add(notice)) {
                    outbox.drain(); // the notifier hands this to its scheduler
                  }
                }
              },
              () -> {
                int ran = outbox.runIfIdle("h1");
                if (ran < 0 && outbox.add("h1")) { // busy: queued behind what runs
                  outbox.drain();
                } else if (ran > 0) {
                  outbox.drain(); // notices came while it ran: their drain is ours to see to
                }
              });

          check(!log.overlapped, "two notices ran at once");
          check(
              log.ran.size() == 3 && log.ran.containsAll(List.of("q1", "q2", "h1")),
              "ran " + log.ran);
          check(log.ran.indexOf("q1") < log.ran.indexOf("q2"), "q2 ran before q1: " + log.ran);
        });
  }

  private static void addUnderLock(
      Outbox<String> outbox, ReentrantLock ownerLock, List<String> decided, String... steps) {
    for (String step : steps) {
      boolean drain;
      ownerLock.lock();
      try {
        decided.add(step);
        drain = outbox.add(step);
      } finally {
        ownerLock.unlock();
      }
      if (drain) {
        outbox.drain();
      }
    }
  }
}

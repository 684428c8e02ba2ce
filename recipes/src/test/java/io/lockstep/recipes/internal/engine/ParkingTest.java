package io.lockstep.recipes.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The grant and the delete a blocking caller parks on (issue 33): completing them wakes the caller,
 * as a plain future's {@code get} would, with the same value, failure, timeout and interrupt; a
 * second waiter waits through {@code get}. Lazy signals: made only if someone waits first, and
 * every waiter goes on once given.
 */
@Timeout(30)
class ParkingTest {
  @Test
  void aParkedCaller_wakesWithTheValue_whenCompleted() throws Exception {
    Parking<String> future = new Parking<>();
    CompletableFuture<String> woken = new CompletableFuture<>();
    Thread caller = waiter(() -> woken.complete(Parking.await(future)));

    parked(caller);
    future.complete("granted");

    assertThat(woken.get(10, TimeUnit.SECONDS)).isEqualTo("granted");
  }

  @Test
  void aParkedCaller_getsTheFailure_andASecondWaiterToo() throws Exception {
    Parking<String> future = new Parking<>();
    AtomicReference<Throwable> first = new AtomicReference<>();
    AtomicReference<Throwable> second = new AtomicReference<>();
    Thread one = waiter(() -> first.set(failureOf(future)));
    parked(one);
    Thread two = waiter(() -> second.set(failureOf(future))); // parks through get

    parked(two);
    future.completeExceptionally(new IllegalStateException("withdrawn"));
    one.join(10_000);
    two.join(10_000);

    assertThat(first.get()).isInstanceOf(ExecutionException.class).hasRootCauseMessage("withdrawn");
    assertThat(second.get())
        .isInstanceOf(ExecutionException.class)
        .hasRootCauseMessage("withdrawn");
  }

  @Test
  void aBoundedWait_timesOut_andAnInterruptStopsAWait_clearingTheFlag() throws Exception {
    Parking<Void> future = new Parking<>();
    assertThatThrownBy(() -> Parking.await(future, TimeUnit.MILLISECONDS.toNanos(20)))
        .isInstanceOf(TimeoutException.class);

    AtomicReference<Throwable> stopped = new AtomicReference<>();
    AtomicReference<Boolean> flagAfter = new AtomicReference<>();
    Thread caller =
        waiter(
            () -> {
              stopped.set(failureOf(future));
              flagAfter.set(Thread.currentThread().isInterrupted());
            });
    parked(caller);
    caller.interrupt();
    caller.join(10_000);

    assertThat(stopped.get()).isInstanceOf(InterruptedException.class);
    assertThat(flagAfter.get()).isFalse(); // as get() leaves it
    assertThat(future.isDone()).isFalse();
    future.complete(null); // nobody parked any more: nothing to wake, no failure
    assertThat(Parking.await(future, 0)).isNull();
  }

  @Test
  void aLazySignal_isMadeOnlyForAWaiter_andEveryWaiterGoesOnOnceGiven() {
    Signals before = new Signals();
    Lazy.give(before, Signals.SIGNAL);
    assertThat(before.signal).isSameAs(Lazy.GIVEN); // given with nobody waiting: nothing made
    assertThat(Lazy.awaited(before, Signals.SIGNAL)).isDone();

    Signals waited = new Signals();
    CompletableFuture<Void> first = Lazy.awaited(waited, Signals.SIGNAL);
    CompletableFuture<Void> second = Lazy.awaited(waited, Signals.SIGNAL);
    assertThat(second).isSameAs(first).isNotDone();
    Lazy.give(waited, Signals.SIGNAL);
    assertThat(first).isCompleted();
  }

  /** An owner of one lazy signal. */
  private static final class Signals {
    @SuppressWarnings("rawtypes")
    static final AtomicReferenceFieldUpdater<Signals, CompletableFuture> SIGNAL =
        AtomicReferenceFieldUpdater.newUpdater(Signals.class, CompletableFuture.class, "signal");

    volatile CompletableFuture<Void> signal;
  }

  /** What waiting for {@code future} threw, or null. */
  private static Throwable failureOf(CompletableFuture<?> future) {
    try {
      Parking.await(future);
      return null;
    } catch (ExecutionException | InterruptedException e) {
      return e;
    }
  }

  /**
   * Spins until {@code thread} parks (the class's timeout bounds it; recipes has no Awaitility).
   */
  private static void parked(Thread thread) {
    while (thread.getState() != Thread.State.WAITING) {
      Thread.onSpinWait();
    }
  }

  private interface Wait {
    void run() throws Exception;
  }

  private static Thread waiter(Wait wait) {
    Thread thread =
        new Thread(
            () -> {
              try {
                wait.run();
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            },
            "waiter");
    thread.setDaemon(true);
    thread.start();
    return thread;
  }
}

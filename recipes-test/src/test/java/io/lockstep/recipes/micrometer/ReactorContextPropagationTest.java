package io.lockstep.recipes.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.recipes.reactor.ReactiveLocks;
import io.micrometer.observation.Observation;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Reactor's forms subscribed on another scheduler ({@code subscribeOn}): the subscription, so the
 * acquisition, happens on a Reactor thread where the caller's observation is not current. With
 * Reactor's automatic context propagation on (and io.micrometer:context-propagation on the class
 * path), Reactor restores it there: the waits and holds are under the caller's observation. Without
 * it they have no parent. The global hook is reset after each test.
 */
@Timeout(60)
class ReactorContextPropagationTest extends ObservedFormsBase {
  private static final Duration LONG = Duration.ofSeconds(10);

  @AfterEach
  void resetTheGlobalHook() {
    Hooks.disableAutomaticContextPropagation();
  }

  @Test
  void subscribedOnAnotherScheduler_withAutomaticPropagation_areUnderTheCallersObservation()
      throws Exception {
    Hooks.enableAutomaticContextPropagation();
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("reactor"));

    ledger.assertAllUnder(underRequest(() -> subscribedElsewhere(lock)), 3, 3);
  }

  /**
   * A plain {@code subscribe()}, not {@code block()}: with the hook, the task Reactor schedules on
   * the other scheduler restores what the subscribing thread had current, so the wait and the hold
   * are under the caller's observation, though the hold comes after the caller's scope closed.
   */
  @Test
  void subscribedWithSubscribe_isUnderTheCallersObservation_too() throws Exception {
    Hooks.enableAutomaticContextPropagation();
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("reactor"));
    CompletableFuture<Long> closed = new CompletableFuture<>();

    Observation request =
        underRequest(
            () ->
                ReactiveLocks.hold(lock)
                    .subscribeOn(Schedulers.parallel())
                    .subscribe(
                        hold -> {
                          closed.complete(hold.fencingToken());
                          hold.close();
                        },
                        closed::completeExceptionally));

    assertThat(closed.get(10, TimeUnit.SECONDS)).isPositive();
    await().until(() -> lock.getParticipantNodes().isEmpty());
    ledger.assertAllUnder(request, 1, 1);
  }

  /** The same without the hook: the acquisitions start where no observation is current. */
  @Test
  void subscribedOnAnotherScheduler_withoutPropagation_haveNoParent() throws Exception {
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("reactor"));

    underRequest(() -> subscribedElsewhere(lock));

    assertThat(ledger.parentsOf(LockstepObservations.ACQUIRE)).containsOnly("none");
  }

  /** Each of Reactor's forms on {@code lock}, subscribed to on parallel and boundedElastic. */
  private static void subscribedElsewhere(ReentrantMutex lock) {
    ReactiveLocks.hold(lock).subscribeOn(Schedulers.parallel()).block(LONG).close();
    ReactiveLocks.hold(lock, LONG).subscribeOn(Schedulers.boundedElastic()).block(LONG).close();
    assertThat(
            ReactiveLocks.withLock(lock, hold -> Mono.just(1))
                .subscribeOn(Schedulers.parallel())
                .blockLast(LONG))
        .isEqualTo(1);
  }
}

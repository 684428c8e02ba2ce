package io.lockstep.recipes.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.ZooKeeperExtension;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * {@link ReactiveLocks} on a real server: holds as {@code Mono}s, cancellation while waiting, work
 * under a lock released however it ends and cancelled when the lock is lost. The extension checks
 * after each test that no node and no watch is left.
 */
@Timeout(60)
class ReactiveLocksTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final String HOOK = "ReactiveLocksTest";

  @AfterEach
  void resetReactorHooks() {
    Schedulers.resetOnScheduleHook(HOOK);
    Hooks.resetOnNextDropped();
  }

  /**
   * The subscriber cancels while the grant is on its way to the body: the hold reached Reactor but
   * not yet the body (here its delivery task waits on boundedElastic until the cancel is done). The
   * hold was dropped unclosed (publishOn clears a value it has not delivered, and the hook that
   * closes untaken holds sat upstream of it): its node stayed until the session ended.
   */
  @Test
  void withLock_cancelledWhileTheGrantIsOnItsWayToTheBody_closesTheHold() throws Exception {
    FencedLock lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    CountDownLatch scheduled = new CountDownLatch(1);
    CountDownLatch cancelled = new CountDownLatch(1);
    AtomicBoolean armed = new AtomicBoolean(true);
    Schedulers.onScheduleHook(
        HOOK,
        task ->
            armed.compareAndSet(true, false)
                ? () -> {
                  scheduled.countDown();
                  awaitQuietly(cancelled);
                  task.run();
                }
                : task);
    AtomicBoolean bodyRan = new AtomicBoolean();

    Disposable running =
        ReactiveLocks.withLock(lock, hold -> Mono.fromRunnable(() -> bodyRan.set(true)))
            .subscribe();
    assertThat(scheduled.await(10, TimeUnit.SECONDS)).as("the grant's delivery scheduled").isTrue();
    running.dispose();
    cancelled.countDown();

    await().until(() -> lock.getParticipantNodes().isEmpty());
    assertThat(bodyRan).isFalse();
    assertAnotherClientAcquires();
  }

  /**
   * {@code hold(lock)} is cancelled while the grant is being handed to it: the cancel has begun
   * (the sink is marked cancelled) but not yet run its callback when the grant arrives. Reactor
   * drops such a value as "next after termination", not as a discard: the hold was never closed.
   */
  @Test
  void hold_cancelledAsTheGrantArrives_closesTheHold() throws Exception {
    FencedLock holder = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    FencedLock waiter = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    CountDownLatch grantOffered = new CountDownLatch(1);
    Hooks.onNextDropped(
        dropped -> {
          if (dropped instanceof LockHold) {
            grantOffered.countDown();
          }
        });
    LockHold held = holder.hold();
    AtomicBoolean inCancel = new AtomicBoolean();
    AtomicReference<Subscription> subscription = new AtomicReference<>();
    AtomicReference<LockHold> delivered = new AtomicReference<>();
    Thread test = Thread.currentThread();
    // read by the cancel between marking the sink cancelled and running its callback
    Runnable grantDuringCancel =
        () -> {
          if (Thread.currentThread() == test && inCancel.compareAndSet(true, false)) {
            held.close();
            awaitQuietly(grantOffered);
          }
        };
    ReactiveLocks.hold(waiter)
        .subscribe(
            new CoreSubscriber<LockHold>() {
              @Override
              public Context currentContext() {
                return new DiscardHookRead(Context.empty(), grantDuringCancel);
              }

              @Override
              public void onSubscribe(Subscription s) {
                subscription.set(s);
                s.request(1);
              }

              @Override
              public void onNext(LockHold hold) {
                delivered.set(hold);
              }

              @Override
              public void onError(Throwable t) {}

              @Override
              public void onComplete() {}
            });
    await().until(() -> waiter.getParticipantNodes().size() == 2);

    inCancel.set(true);
    subscription.get().cancel();

    assertThat(grantOffered.getCount()).as("the grant came during the cancel").isZero();
    assertThat(delivered.get()).isNull();
    await().until(() -> waiter.getParticipantNodes().isEmpty());
    assertAnotherClientAcquires();
  }

  private static void assertAnotherClientAcquires() throws InterruptedException {
    FencedLock other = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    Optional<LockHold> hold = other.tryHold(Duration.ofSeconds(10));
    assertThat(hold).as("another client acquires").isPresent();
    hold.get().close();
  }

  /** A context that runs {@code onRead} whenever an operator looks up its discard hook. */
  private record DiscardHookRead(Context context, Runnable onRead) implements Context {
    @Override
    public <T> T get(Object key) {
      return context.get(key);
    }

    @Override
    public <T> T getOrDefault(Object key, T defaultValue) {
      if ("reactor.onDiscard.local".equals(key)) {
        onRead.run();
      }
      return context.getOrDefault(key, defaultValue);
    }

    @Override
    public boolean hasKey(Object key) {
      return context.hasKey(key);
    }

    @Override
    public int size() {
      return context.size();
    }

    @Override
    public Stream<Map.Entry<Object, Object>> stream() {
      return context.stream();
    }

    @Override
    public Context put(Object key, Object value) {
      return new DiscardHookRead(context.put(key, value), onRead);
    }

    @Override
    public Context delete(Object key) {
      return new DiscardHookRead(context.delete(key), onRead);
    }
  }

  /** {@code lock}, but the close of each of its holds throws, after closing it. */
  private static FencedLock closeFails(FencedLock lock) {
    InvocationHandler holds =
        (proxy, method, args) -> {
          Object result = invoke(lock, method, args);
          if (!method.getName().equals("acquireAsync")) {
            return result;
          }
          return ((CompletionStage<?>) result)
              .thenApply(
                  hold ->
                      Proxy.newProxyInstance(
                          LockHold.class.getClassLoader(),
                          new Class<?>[] {LockHold.class},
                          (holdProxy, holdMethod, holdArgs) -> {
                            Object returned = invoke(hold, holdMethod, holdArgs);
                            if (holdMethod.getName().equals("close")) {
                              throw new IllegalStateException("close failed");
                            }
                            return returned;
                          }));
        };
    return (FencedLock)
        Proxy.newProxyInstance(
            FencedLock.class.getClassLoader(), new Class<?>[] {FencedLock.class}, holds);
  }

  private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      var unused = latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void hold_acquiresOnSubscription_andTheSubscriberCloses() {
    FencedLock lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    Mono<LockHold> mono = ReactiveLocks.hold(lock);
    assertThat(lock.getParticipantNodes()).as("nothing before subscription").isEmpty();

    LockHold hold = mono.block(Duration.ofSeconds(10));

    assertThat(hold.state()).isEqualTo(LockState.HELD);
    assertThat(lock.getParticipantNodes()).hasSize(1);
    hold.close();
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  @Test
  void hold_cancelledWhileWaiting_leavesNoNode() throws Exception {
    CuratorFramework admin = zk.newClient();
    FencedLock holder = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    FencedLock waiter = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    try (LockHold held = holder.hold()) {
      Disposable waiting = ReactiveLocks.hold(waiter).subscribe(LockHold::close);
      await().until(() -> admin.getChildren().forPath(zk.path("lock")).size() == 2);

      waiting.dispose();

      await().until(() -> admin.getChildren().forPath(zk.path("lock")).size() == 1);
      assertThat(held.state()).isEqualTo(LockState.HELD);
    }
  }

  @Test
  void hold_withinABudget_failsWithTimeout_andLeavesNoNode() throws Exception {
    CuratorFramework admin = zk.newClient();
    FencedLock holder = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    FencedLock waiter = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    try (LockHold held = holder.hold()) {
      assertThatThrownBy(() -> ReactiveLocks.hold(waiter, Duration.ofMillis(200)).block())
          .hasCauseInstanceOf(TimeoutException.class);
      await().until(() -> admin.getChildren().forPath(zk.path("lock")).size() == 1);
    }
    assertThatThrownBy(() -> ReactiveLocks.hold(waiter, Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("wait");
  }

  @Test
  void withLock_runsTheBodyUnderTheLock_andReleasesOnCompletion() {
    FencedLock lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));

    List<Long> tokens =
        ReactiveLocks.withLock(lock, hold -> Flux.just(hold.fencingToken(), hold.fencingToken()))
            .collectList()
            .block(Duration.ofSeconds(10));

    assertThat(tokens).hasSize(2).allMatch(token -> token > 0);
    await().until(() -> lock.getParticipantNodes().isEmpty());
  }

  @Test
  void withLock_releasesOnErrorAndOnCancel() {
    FencedLock lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));

    assertThatThrownBy(
            () ->
                ReactiveLocks.withLock(lock, hold -> Flux.error(new IllegalStateException("boom")))
                    .blockLast(Duration.ofSeconds(10)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("boom");
    await().until(() -> lock.getParticipantNodes().isEmpty());

    AtomicBoolean bodyCancelled = new AtomicBoolean();
    Disposable running =
        ReactiveLocks.withLock(
                lock, hold -> Flux.<Long>never().doOnCancel(() -> bodyCancelled.set(true)))
            .subscribe();
    await().until(() -> lock.getParticipantNodes().size() == 1);
    running.dispose();
    await().until(() -> bodyCancelled.get() && lock.getParticipantNodes().isEmpty());
  }

  @Test
  void withLock_bodyIsCancelled_andFailsWithTheLoss_whenTheHoldIsLost() throws Exception {
    CuratorFramework admin = zk.newClient();
    FencedLock lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    AtomicBoolean bodyCancelled = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicReference<String> signalledOn = new AtomicReference<>();

    ReactiveLocks.withLock(
            lock, hold -> Flux.<Long>never().doOnCancel(() -> bodyCancelled.set(true)))
        .subscribe(
            token -> {},
            error -> {
              signalledOn.set(Thread.currentThread().getName());
              failure.set(error);
            });
    await().until(() -> lock.getParticipantNodes().size() == 1);
    admin.delete().forPath(lock.getParticipantNodes().iterator().next());

    await().until(() -> failure.get() != null);
    assertThat(failure.get()).isInstanceOf(LockOwnershipLostException.class);
    await().untilTrue(bodyCancelled);
    assertThat(signalledOn.get()).doesNotContain("EventThread");
    await().until(() -> lock.getParticipantNodes().isEmpty()); // the lost hold was closed too
  }

  /**
   * A body may close its hold early, once the work that needs the lock is done: that is no loss,
   * and the rest of the body runs on. (The hold's loss stage fails when it is closed, and
   * takeUntilOther cancels the work when the other publisher fails too, not only when it emits.)
   */
  @Test
  void withLock_aBodyThatClosesItsHold_runsOn() {
    FencedLock lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));

    List<Long> emitted =
        ReactiveLocks.withLock(
                lock, hold -> Mono.fromRunnable(hold::close).then(Mono.fromCallable(() -> 7L)))
            .collectList()
            .block(Duration.ofSeconds(10));

    assertThat(emitted).containsExactly(7L);
    assertThat(lock.getParticipantNodes()).isEmpty();
  }

  /**
   * The body failed and closing the hold failed too (a lock of the caller's own whose holds' close
   * throws): the body's error is what the subscriber gets, the close's failure suppressed in it.
   * (usingWhen wrapped the body's error in a RuntimeException of its own.)
   */
  @Test
  void withLock_aCloseThatFails_leavesTheBodysErrorFirst() {
    FencedLock lock = closeFails(new ReentrantMutex(zk.newClient(), zk.path("lock")));

    assertThatThrownBy(
            () ->
                ReactiveLocks.withLock(lock, hold -> Flux.error(new IllegalStateException("boom")))
                    .blockLast(Duration.ofSeconds(10)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("boom")
        .satisfies(
            boom ->
                assertThat(boom.getSuppressed())
                    .anyMatch(closing -> "close failed".equals(closing.getMessage())));
    await().until(() -> lock.getParticipantNodes().isEmpty());
  }

  /** A subscriber that cancels in onSubscribe, before the attempt has started: nothing is left. */
  @Test
  void hold_cancelledOnSubscribe_leavesNoNode() throws Exception {
    FencedLock lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    AtomicReference<LockHold> delivered = new AtomicReference<>();

    ReactiveLocks.hold(lock)
        .subscribe(
            new BaseSubscriber<LockHold>() {
              @Override
              protected void hookOnSubscribe(Subscription subscription) {
                cancel();
              }

              @Override
              protected void hookOnNext(LockHold hold) {
                delivered.set(hold);
              }
            });

    CuratorFramework admin = zk.newClient();
    await().until(() -> ZooKeeperExtension.childrenOrNone(admin, zk.path("lock")).isEmpty());
    assertThat(delivered.get()).isNull();
    assertAnotherClientAcquires();
  }

  /**
   * A body whose publisher never calls onSubscribe (not yet connected, say): cancelling the result
   * still closes the hold. usingWhen runs its cancel clean-up only once a subscription has reached
   * it, and concatWith passes none on before the body's: the hold stayed.
   */
  @Test
  void withLock_aBodyThatNeverSubscribes_isReleasedOnCancel() throws Exception {
    FencedLock lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    AtomicBoolean bodySubscribed = new AtomicBoolean();

    Disposable running =
        ReactiveLocks.withLock(lock, hold -> subscriber -> bodySubscribed.set(true)).subscribe();
    await().untilTrue(bodySubscribed);
    assertThat(lock.getParticipantNodes()).hasSize(1);
    running.dispose();

    await().until(() -> lock.getParticipantNodes().isEmpty());
    assertAnotherClientAcquires();
  }

  @Test
  void manyCycles_leaveTheThreadCountBounded() {
    FencedLock lock = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    ReactiveLocks.withLock(lock, hold -> Mono.just(1)).blockLast(Duration.ofSeconds(10));
    int before = Thread.activeCount();

    for (int i = 0; i < 100; i++) {
      ReactiveLocks.withLock(lock, hold -> Mono.just(hold.fencingToken()))
          .blockLast(Duration.ofSeconds(10));
    }

    await().until(() -> lock.getParticipantNodes().isEmpty());
    assertThat(Thread.activeCount()).as("no thread per cycle").isLessThan(before + 20);
  }

  /**
   * Bodies that block (a blocking write in {@code Mono.fromCallable}, as the docs' example) run on
   * Reactor's boundedElastic, not on Lockstep's small shared pool: more of them than the pool has
   * threads do not keep another lock of the client from being granted.
   */
  @Test
  void withLock_bodiesThatBlock_holdUpNoOtherLock() throws Exception {
    CuratorFramework client = zk.newClient();
    CountDownLatch finish = new CountDownLatch(1);
    AtomicInteger ended = new AtomicInteger();
    List<String> bodyThreads = new CopyOnWriteArrayList<>();
    int bodies = 16; // the pool has at most 16 threads, and 4 on this machine
    for (int i = 0; i < bodies; i++) {
      var unused =
          ReactiveLocks.withLock(
                  new ReentrantMutex(client, zk.path("blocking-" + i)),
                  hold ->
                      Mono.fromCallable(
                          () -> {
                            bodyThreads.add(Thread.currentThread().getName());
                            return finish.await(60, TimeUnit.SECONDS);
                          }))
              .doFinally(signal -> ended.incrementAndGet())
              .subscribe();
    }
    Optional<LockHold> other;
    try {
      await().until(() -> bodyThreads.size() == bodies);

      other = new ReentrantMutex(client, zk.path("other")).tryHold(Duration.ofSeconds(10));
    } finally {
      finish.countDown(); // whatever happened: no body blocks a thread past the test
    }
    await().until(() -> ended.get() == bodies);
    assertThat(other).as("granted while %s bodies block", bodies).isPresent();
    other.get().close();
    assertThat(bodyThreads).noneMatch(name -> name.startsWith("lockstep-"));
  }
}

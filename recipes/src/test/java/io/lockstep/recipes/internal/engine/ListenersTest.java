package io.lockstep.recipes.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A lock object's listeners, made at the first one added: nothing before, every listener kept
 * after, whichever threads add the first ones at once.
 */
@Timeout(30)
class ListenersTest {
  private final Listeners<Consumer<String>> listeners = new Listeners<>();
  private final List<String> heard = new CopyOnWriteArrayList<>();

  @Test
  void none_untilTheFirstIsAdded() {
    listeners.removeListener(heard::add); // nothing to remove: no effect

    listeners.forEach(listener -> listener.accept("nobody"));

    assertThat(listeners.size()).isZero();
    assertThat(heard).isEmpty();
  }

  @Test
  void added_areCalled_removed_areNot() {
    Consumer<String> first = value -> heard.add("first " + value);
    Consumer<String> second = value -> heard.add("second " + value);
    listeners.addListener(first);
    listeners.addListener(second);

    listeners.forEach(listener -> listener.accept("a"));
    listeners.removeListener(first);
    listeners.forEach(listener -> listener.accept("b"));

    assertThat(heard).containsExactlyInAnyOrder("first a", "second a", "second b");
    assertThat(listeners.size()).isEqualTo(1);
  }

  @Test
  void addedWithAnExecutor_isCalledOnIt() throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "theirs"));
    try {
      CountDownLatch called = new CountDownLatch(1);
      listeners.addListener(
          value -> {
            heard.add(Thread.currentThread().getName());
            called.countDown();
          },
          executor);

      listeners.forEach(listener -> listener.accept("a"));

      assertThat(called.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(heard).containsExactly("theirs");
    } finally {
      executor.shutdownNow();
    }
  }

  @Test
  void firstAddsRacing_keepEveryListener() throws Exception {
    int threads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 500; round++) {
        Listeners<Consumer<String>> fresh = new Listeners<>();
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<?>> adds = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          String name = "listener " + t;
          Consumer<String> own = value -> heard.add(name); // one object per thread
          adds.add(
              pool.submit(
                  () -> {
                    start.await();
                    fresh.addListener(own);
                    return null;
                  }));
        }
        for (Future<?> add : adds) {
          add.get(10, TimeUnit.SECONDS);
        }
        assertThat(fresh.size()).as("round %d", round).isEqualTo(threads);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}

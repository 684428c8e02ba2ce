package io.lockstep.recipes.internal.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A shared read hold's own node, without a server: started once however many ask, given up once at
 * the release, and never started after it, also when the release comes from another thread of the
 * hold between an ask's look and its start (the window that left a node behind until the session
 * ended).
 */
@Timeout(10)
class OwnReadNodeTest {
  /** The nodes started and given up, by name: "n1", "n2"... */
  private final List<String> started = new ArrayList<>();

  private final List<String> givenUp = new ArrayList<>();
  private final AtomicReference<Runnable> duringStart = new AtomicReference<>(() -> {});

  private final OwnReadNode<String> own =
      new OwnReadNode<>(
          placeNode -> {
            duringStart.get().run(); // what another thread does while this one starts
            String node = "n" + (started.size() + 1) + "@" + placeNode;
            synchronized (started) {
              started.add(node);
            }
            return node;
          },
          node -> {
            synchronized (givenUp) {
              givenUp.add(node);
            }
            return CompletableFuture.completedFuture(null);
          });

  @Test
  void start_startsOneNodeOnThePlacesNode_andAsksAgainGetTheSame() {
    assertThat(own.start("p-1")).isEqualTo("n1@p-1");
    assertThat(own.start("p-1")).isEqualTo("n1@p-1");

    assertThat(started).containsExactly("n1@p-1");
    assertThat(givenUp).isEmpty();
  }

  @Test
  void release_givesTheStartedNodeUpOnce() {
    own.start("p-1");

    assertThat(own.release()).isCompleted();
    assertThat(own.release()).isCompleted();

    assertThat(givenUp).containsExactly("n1@p-1");
  }

  @Test
  void release_withNoNode_givesNothingUp() {
    assertThat(own.release()).isCompleted();

    assertThat(started).isEmpty();
    assertThat(givenUp).isEmpty();
  }

  @Test
  void start_afterTheRelease_startsNothing() {
    var unused = own.release();

    assertThat(own.start("p-1")).isNull();
    assertThat(started).isEmpty();
  }

  @Test
  void start_whileAnotherThreadOfTheHoldLetsGo_givesItsNodeUp_andReturnsNone() {
    duringStart.set(
        () ->
            assertThat(own.release())
                .isCompleted()); // the release lands between the look and the start

    assertThat(own.start("p-1")).isNull();

    assertThat(started).containsExactly("n1@p-1");
    assertThat(givenUp).containsExactly("n1@p-1");
  }

  @Test
  void start_racingAnotherStart_keepsOne_andGivesTheOtherUp() {
    duringStart.set(
        () -> {
          duringStart.set(() -> {});
          own.start("p-1"); // the other thread's start wins
        });

    assertThat(own.start("p-1")).isEqualTo("n1@p-1");

    assertThat(started).containsExactly("n1@p-1", "n2@p-1");
    assertThat(givenUp).containsExactly("n2@p-1");
    var unused = own.release();
    assertThat(givenUp).containsExactly("n2@p-1", "n1@p-1");
  }

  @Test
  void manyThreadsAskingWhileOneLetsGo_leaveNoNodeNotGivenUp() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      for (int round = 0; round < 200; round++) {
        OwnReadNode<String> node = racingNode();
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> asks = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
          asks.add(
              pool.submit(
                  () -> {
                    go.await();
                    return node.start("p");
                  }));
        }
        Future<Boolean> release =
            pool.submit(
                () -> {
                  go.await();
                  return node.release().isDone();
                });
        go.countDown();
        for (Future<?> ask : asks) {
          ask.get(5, TimeUnit.SECONDS);
        }
        assertThat(release.get(5, TimeUnit.SECONDS)).isTrue();

        assertThat(givenUp).as("round %d", round).containsExactlyInAnyOrderElementsOf(started);
        started.clear();
        givenUp.clear();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private OwnReadNode<String> racingNode() {
    return new OwnReadNode<>(
        placeNode -> {
          synchronized (started) {
            String node = "n" + started.size();
            started.add(node);
            return node;
          }
        },
        node -> {
          synchronized (givenUp) {
            givenUp.add(node);
          }
          return CompletableFuture.completedFuture(null);
        });
  }
}

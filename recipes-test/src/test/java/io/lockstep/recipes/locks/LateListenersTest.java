package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordingFile;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * An attempt nobody hears makes no notifier, telemetry or loss stage (issue 33): they are made when
 * someone first needs them. Whoever begins to listen after the attempt began (an observer, a
 * listener, a recording, a caller of {@code whenLost}) still hears what it heard when every attempt
 * made them at its start, in order and never on ZooKeeper's event thread; and a release nobody
 * hears still deletes the node and ends the attempt.
 */
@Timeout(60)
class LateListenersTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  @Test
  void anObserverAddedWhileAnAttemptWaits_hearsHowItEnds_andItsRelease() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex holder = new ReentrantMutex(zk.newClient(), zk.path("lock"));
    ReentrantMutex waiter = new ReentrantMutex(client, zk.path("lock"));
    LockObserverTest.Journal journal = new LockObserverTest.Journal();
    holder.acquire();

    try (LockThread thread = new LockThread("waiter")) {
      CompletableFuture<Void> acquired = thread.run(waiter::acquire);
      await().until(() -> waiter.getParticipantNodes().size() == 2);
      LockObservers.of(client).addListener(journal); // the attempt began unheard
      holder.release();
      acquired.get(10, TimeUnit.SECONDS);
      thread.run(waiter::release).get(10, TimeUnit.SECONDS);
    }

    assertThat(journal.entries).as("heard before release returned").endsWith("lock released");
    assertThat(journal.entries).containsExactly("lock GRANTED with token", "lock released");
    assertThat(journal.ids).as("one acquisition").containsOnly(journal.ids.get(0));
    assertThat(journal.threads).noneMatch(name -> name.contains("EventThread"));
  }

  /**
   * An idle lock object keeps no listener table and no {@code Lock} view until asked for one; once
   * made it is the same one for good, also when threads ask at once: a listener added through one
   * {@code getStateListenable()} is removed through another.
   */
  @Test
  void theListenersAndTheLockView_madeWhenFirstAskedFor_areTheSameForGood() throws Exception {
    CuratorFramework client = zk.newClient();
    ExecutorService threads = Executors.newFixedThreadPool(4);
    try {
      for (int i = 0; i < 200; i++) {
        ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock" + i));
        List<Callable<List<Object>>> asks =
            Collections.nCopies(
                4, () -> List.of(lock.getStateListenable(), LockObservers.of(lock), lock.asLock()));
        List<List<Object>> answers = new ArrayList<>();
        for (Future<List<Object>> answer : threads.invokeAll(asks)) {
          answers.add(answer.get());
        }
        for (int part = 0; part < 3; part++) {
          Object first = answers.get(0).get(part);
          for (List<Object> answer : answers) {
            assertThat(answer.get(part)).as("lock %d, part %d", i, part).isSameAs(first);
          }
        }
      }
    } finally {
      threads.shutdownNow();
    }
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("removed"));
    List<LockState> heard = new CopyOnWriteArrayList<>();
    LockStateListener listener = change -> heard.add(change.state());
    lock.getStateListenable().addListener(listener);
    lock.getStateListenable().removeListener(listener);
    lock.acquire();
    lock.release();
    assertThat(heard).as("removed through another call").isEmpty();
  }

  @Test
  void aListenerAnObserverAndALossStage_addedWhileHeld_hearTheLossInOrder_offTheEventThread()
      throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("lock"));
    LockHold hold = lock.hold(); // nobody hears it: granted without a notifier
    List<String> listened = new CopyOnWriteArrayList<>();
    List<String> threads = new CopyOnWriteArrayList<>();
    lock.getStateListenable()
        .addListener(
            change -> {
              listened.add("lock state " + change.state());
              threads.add(Thread.currentThread().getName());
            });
    LockObserverTest.Journal journal = new LockObserverTest.Journal();
    LockObservers.of(lock).addListener(journal);
    CompletableFuture<String> lossHeardOn =
        hold.whenLost().toCompletableFuture().thenApply(loss -> Thread.currentThread().getName());

    Sessions.expire(client, zk.server().getConnectString());

    assertThat(lossHeardOn.get(30, TimeUnit.SECONDS)).doesNotContain("EventThread");
    await().until(() -> listened.contains("lock state LOST"));
    List<String> beforeRelease = List.copyOf(listened);
    assertThat(beforeRelease).last().isEqualTo("lock state LOST");
    assertThat(journal.entries).as("the same notices, in order").isEqualTo(beforeRelease);
    hold.close();
    assertThat(journal.entries).endsWith("lock state LOST", "lock released");
    assertThat(threads).isNotEmpty().noneMatch(name -> name.contains("EventThread"));
    assertThat(journal.threads).noneMatch(name -> name.contains("EventThread"));
    zk.skipLeakCheck();
  }

  @Test
  void aRecordingStartedWhileALockIsHeld_recordsItsStateChanges(@TempDir Path dir)
      throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("jfr"));
    LockHold hold = lock.hold(); // no recording, no observer: no telemetry
    Path file = dir.resolve("late.jfr");
    try (Recording recording = new Recording()) {
      recording.enable("io.lockstep.LockStateChange");
      recording.start();

      Sessions.expire(client, zk.server().getConnectString());
      await().until(() -> hold.state() == LockState.LOST);
      hold.close();

      recording.stop();
      recording.dump(file);
    }
    List<String> states =
        RecordingFile.readAllEvents(file).stream()
            .filter(e -> e.getEventType().getName().equals("io.lockstep.LockStateChange"))
            .map(e -> e.getString("path") + " " + e.getString("state"))
            .toList();
    assertThat(states).contains(zk.path("jfr") + " LOST");
    zk.skipLeakCheck();
  }

  @Test
  void aReleaseNobodyHears_deletesTheNode_andEndsTheAttempt() throws Exception {
    CuratorFramework client = zk.newClient();
    KeyedLocks locks = new KeyedLocks(client, zk.path("keys"));
    ReentrantMutex lock = locks.mutex("k");

    for (int i = 0; i < 3; i++) {
      lock.acquire();
      lock.release();
      assertThat(ZooKeeperExtension.childrenOrNone(client, locks.pathOf("k")))
          .as("deleted before release returned")
          .isEmpty();
    }
    locks.expireUnusedOlderThan(Duration.ZERO);

    assertThat(locks.mutex("k")).as("no attempt left live: dropped").isNotSameAs(lock);
  }
}

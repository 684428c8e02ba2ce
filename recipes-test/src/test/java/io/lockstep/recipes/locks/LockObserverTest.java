package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The listener point every adapter is built on, and the Flight Recorder events of the core. */
@Timeout(60)
class LockObserverTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Records every callback as "path callback detail", with its attempt's id and thread. */
  static final class Journal implements LockObserver {
    final List<String> entries = new CopyOnWriteArrayList<>();
    final List<Long> ids = new CopyOnWriteArrayList<>();
    final List<String> threads = new CopyOnWriteArrayList<>();

    @Override
    public void attemptStarted(LockAttempt attempt) {
      add(attempt, "started " + attempt.recipe());
    }

    @Override
    public void attemptEnded(
        LockAttempt attempt, AcquireOutcome outcome, Duration waited, long fencingToken) {
      assertThat(waited.isNegative()).isFalse();
      add(attempt, outcome + (fencingToken > 0 ? " with token" : ""));
    }

    @Override
    public void stateChanged(LockAttempt attempt, LockState state, long fencingToken) {
      add(attempt, "state " + state);
    }

    @Override
    public void released(LockAttempt attempt, Duration held, long fencingToken) {
      assertThat(held.isNegative()).isFalse();
      add(attempt, "released");
    }

    private void add(LockAttempt attempt, String what) {
      entries.add(attempt.path().substring(attempt.path().lastIndexOf('/') + 1) + " " + what);
      ids.add(attempt.id());
      threads.add(Thread.currentThread().getName());
    }
  }

  @Test
  void aClientsObserver_hearsEveryAcquisitionOfItsLocks_inOrder() throws Exception {
    CuratorFramework client = zk.newClient();
    Journal journal = new Journal();
    LockObservers.of(client).addListener(journal);
    ReentrantMutex a = new ReentrantMutex(client, zk.path("a"));
    ReentrantMutex other = new ReentrantMutex(zk.newClient(), zk.path("b"));
    ReentrantMutex b = new ReentrantMutex(client, zk.path("b"));

    a.acquire();
    a.acquire(); // reentrant: no attempt
    a.release();
    a.release();
    other.acquire();
    assertThat(b.acquire(100, TimeUnit.MILLISECONDS)).isFalse();
    CompletableFuture<LockHold> cancelled = b.acquireAsync().toCompletableFuture();
    await().until(() -> other.getParticipantNodes().size() == 2);
    cancelled.cancel(true);
    other.release();

    await()
        .untilAsserted(
            () ->
                assertThat(journal.entries)
                    .containsExactly(
                        "a started ReentrantMutex",
                        "a GRANTED with token",
                        "a released",
                        "b started ReentrantMutex",
                        "b TIMED_OUT",
                        "b started ReentrantMutex",
                        "b WITHDRAWN"));
    assertThat(journal.threads).noneMatch(name -> name.contains("EventThread"));
  }

  @Test
  void aLocksObserver_hearsStateChangesAndFailures_ofThatLockOnly() throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex watched = new ReentrantMutex(client, zk.path("w"));
    ReentrantMutex unwatched = new ReentrantMutex(client, zk.path("u"));
    Journal journal = new Journal();
    LockObservers.of(watched).addListener(journal);

    unwatched.acquire();
    unwatched.release();
    watched.acquire();
    Sessions.expire(client, zk.server().getConnectString());
    await().untilAsserted(() -> assertThat(journal.entries).contains("w state LOST"));
    watched.release();
    client.close();
    assertThatThrownBy(watched::acquire).isInstanceOf(LockException.class);

    await()
        .untilAsserted(
            () ->
                assertThat(journal.entries)
                    .containsSubsequence(
                        "w started ReentrantMutex",
                        "w GRANTED with token",
                        "w state LOST",
                        "w released",
                        "w started ReentrantMutex",
                        "w FAILED"));
    assertThat(journal.entries).noneMatch(entry -> entry.startsWith("u "));
    zk.skipLeakCheck();
  }

  @Test
  void observersOfAComposedMultiMutex_areRefusedByName() {
    CuratorFramework client = zk.newClient();
    MultiMutex composed =
        new MultiMutex(
            List.of(
                new ReentrantMutex(client, zk.path("x")),
                new ReentrantMutex(client, zk.path("y"))));
    assertThatThrownBy(() -> LockObservers.of(composed))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lock");
    assertThat(LockObservers.of(new MultiMutex(client, List.of(zk.path("x"), zk.path("y")))))
        .isNotNull();
  }

  @Test
  void aFlightRecording_holdsTheAcquireHoldAndStateChangeEvents(@TempDir Path dir)
      throws Exception {
    CuratorFramework client = zk.newClient();
    ReentrantMutex lock = new ReentrantMutex(client, zk.path("jfr"));
    Path file = dir.resolve("lockstep.jfr");
    try (Recording recording = new Recording()) {
      recording.enable("io.lockstep.LockAcquire");
      recording.enable("io.lockstep.LockHold");
      recording.enable("io.lockstep.LockStateChange");
      recording.start();

      LockHold hold = lock.hold();
      long token = hold.fencingToken();
      Sessions.expire(client, zk.server().getConnectString());
      await().until(() -> hold.state() == LockState.LOST);
      hold.close();

      recording.stop();
      recording.dump(file);
      List<RecordedEvent> events = RecordingFile.readAllEvents(file);
      List<RecordedEvent> acquires = named(events, "io.lockstep.LockAcquire");
      List<RecordedEvent> holds = named(events, "io.lockstep.LockHold");
      List<RecordedEvent> changes = named(events, "io.lockstep.LockStateChange");

      assertThat(acquires).hasSize(1);
      assertThat(acquires.get(0).getString("path")).isEqualTo(zk.path("jfr"));
      assertThat(acquires.get(0).getString("recipe")).isEqualTo("ReentrantMutex");
      assertThat(acquires.get(0).getString("outcome")).isEqualTo("GRANTED");
      assertThat(acquires.get(0).getLong("fencingToken")).isEqualTo(token);
      assertThat(holds).hasSize(1);
      assertThat(holds.get(0).getLong("fencingToken")).isEqualTo(token);
      assertThat(holds.get(0).getDuration()).isPositive();
      assertThat(changes.stream().map(e -> e.getString("state")).collect(Collectors.toList()))
          .contains("LOST");
    }
    assertThat(Files.size(file)).isPositive();
    zk.skipLeakCheck();
  }

  private static List<RecordedEvent> named(List<RecordedEvent> events, String name) {
    return events.stream()
        .filter(event -> event.getEventType().getName().equals(name))
        .collect(Collectors.toList());
  }
}

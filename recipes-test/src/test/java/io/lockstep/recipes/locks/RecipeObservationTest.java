package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What observers hear of a counting semaphore and a leader election: one acquisition per request
 * (per term), with its true outcome, never the semaphore's fast try or its {@code locks} mutex.
 */
@Timeout(90)
class RecipeObservationTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Every callback, by attempt id, in the order each attempt heard them. */
  private static final class Journal implements LockObserver {
    final Map<Long, List<String>> byAttempt = new ConcurrentHashMap<>();
    final List<LockAttempt> attempts = new CopyOnWriteArrayList<>();

    @Override
    public void attemptStarted(LockAttempt attempt) {
      add(attempt, "started"); // before the attempt is listed: a story is never missing
      attempts.add(attempt);
    }

    @Override
    public void attemptEnded(
        LockAttempt attempt, AcquireOutcome outcome, Duration waited, long fencingToken) {
      add(attempt, outcome.name());
    }

    @Override
    public void stateChanged(LockAttempt attempt, LockState state, long fencingToken) {
      add(attempt, state.name());
    }

    @Override
    public void released(LockAttempt attempt, Duration held, long fencingToken) {
      add(attempt, "released");
    }

    private void add(LockAttempt attempt, String what) {
      byAttempt.computeIfAbsent(attempt.id(), id -> new CopyOnWriteArrayList<>()).add(what);
    }

    /** Each attempt's story, in the order the attempts started. */
    List<String> stories() {
      return attempts.stream()
          .map(a -> String.join(" ", byAttempt.get(a.id())))
          .collect(Collectors.toList());
    }
  }

  @Test
  void semaphore_eachRequestIsOneAcquisition_withItsTrueOutcome() throws Exception {
    CuratorFramework client = zk.newClient();
    Journal journal = new Journal();
    LockObservers.of(client).addListener(journal);
    String path = zk.path("semaphore");
    CountingSemaphore semaphore = new CountingSemaphore(client, path, 1);
    CountingSemaphore other = new CountingSemaphore(zk.newClient(), path, 1); // not observed

    semaphore.acquire().close(); // free: granted at the fast try
    LockHold taken = other.acquire();
    assertThat(semaphore.tryHold(Duration.ZERO)).isEmpty(); // the fast try alone
    assertThat(semaphore.tryHold(Duration.ofMillis(200))).isEmpty(); // fast try, mutex, lease
    CompletableFuture<LockHold> cancelled =
        semaphore.acquireAsync(Duration.ofSeconds(20)).toCompletableFuture();
    await().until(() -> other.getParticipantNodes().size() == 2); // its lease waits
    cancelled.cancel(true);
    await().until(() -> other.getParticipantNodes().size() == 1);
    try (LockThread waiter = new LockThread("waiter")) {
      CompletableFuture<LockHold> waited = waiter.call(semaphore::acquire);
      await().until(() -> other.getParticipantNodes().size() == 2);
      taken.close();
      waited.get(10, TimeUnit.SECONDS).close();
    }

    await()
        .untilAsserted(
            () ->
                assertThat(journal.stories())
                    .containsExactly(
                        "started GRANTED released",
                        "started TIMED_OUT",
                        "started TIMED_OUT",
                        "started WITHDRAWN",
                        "started GRANTED released"));
    assertThat(journal.attempts)
        .allSatisfy(
            attempt -> {
              assertThat(attempt.recipe()).isEqualTo("CountingSemaphore");
              assertThat(attempt.path()).isEqualTo(path);
            });
  }

  @Test
  void semaphoreMutex_eachAcquireIsOneAcquisition_namedForItsRecipe() throws Exception {
    CuratorFramework client = zk.newClient();
    Journal journal = new Journal();
    LockObservers.of(client).addListener(journal);
    String path = zk.path("semaphore-mutex");
    SemaphoreMutex lock = new SemaphoreMutex(client, path);
    SemaphoreMutex other = new SemaphoreMutex(zk.newClient(), path); // not observed

    lock.acquire();
    lock.release();
    other.acquire();
    assertThat(lock.acquire(200, TimeUnit.MILLISECONDS)).isFalse(); // fast try, mutex, lease
    other.release();

    await()
        .untilAsserted(
            () ->
                assertThat(journal.stories())
                    .containsExactly("started GRANTED released", "started TIMED_OUT"));
    assertThat(journal.attempts)
        .allSatisfy(
            attempt -> {
              assertThat(attempt.recipe()).isEqualTo("SemaphoreMutex");
              assertThat(attempt.path()).isEqualTo(path);
            });
  }

  @Test
  void election_eachTermIsOneAcquisition_heldUntilClosed() throws Exception {
    CuratorFramework client = zk.newClient();
    Journal journal = new Journal();
    LockObservers.of(client).addListener(journal);
    String path = zk.path("election");
    LeaderElection first = LeaderElection.builder(zk.newClient(), path).build(); // not observed
    first.start();
    assertThat(first.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    LeaderElection second = LeaderElection.builder(client, path).build();
    LeaderElection third = LeaderElection.builder(client, path).build();

    second.start();
    third.start();
    await().until(() -> second.participants().size() == 3);
    third.close(); // withdrawn while it waits
    first.close();
    assertThat(second.awaitLeadership(Duration.ofSeconds(10))).isPresent();
    second.close(); // the term ends

    await()
        .untilAsserted(
            () ->
                assertThat(journal.stories())
                    .containsExactly("started GRANTED released", "started WITHDRAWN"));
    assertThat(journal.attempts).extracting(LockAttempt::recipe).containsOnly("LeaderElection");
  }

  @Test
  void semaphore_aFlightRecording_holdsOneAcquireEventPerRequest(@TempDir Path dir)
      throws Exception {
    String path = zk.path("jfr");
    CountingSemaphore semaphore = new CountingSemaphore(zk.newClient(), path, 1);
    CountingSemaphore other = new CountingSemaphore(zk.newClient(), path, 1);
    LockHold taken = other.acquire();
    Path file = dir.resolve("semaphore.jfr");
    try (Recording recording = new Recording()) {
      recording.enable("io.lockstep.LockAcquire");
      recording.start();

      assertThat(semaphore.tryHold(Duration.ZERO)).isEmpty();
      assertThat(semaphore.tryHold(Duration.ofMillis(200))).isEmpty();
      taken.close();
      semaphore.acquire().close();

      recording.stop();
      recording.dump(file);
    }
    List<RecordedEvent> acquires =
        RecordingFile.readAllEvents(file).stream()
            .filter(event -> event.getEventType().getName().equals("io.lockstep.LockAcquire"))
            .sorted(Comparator.comparing(RecordedEvent::getStartTime))
            .collect(Collectors.toList()); // threads' buffers are written in no particular order
    assertThat(acquires)
        .extracting(event -> event.getString("outcome"))
        .containsExactly("TIMED_OUT", "TIMED_OUT", "GRANTED");
    assertThat(acquires)
        .allSatisfy(
            event -> {
              assertThat(event.getString("path")).isEqualTo(path);
              assertThat(event.getString("recipe")).isEqualTo("CountingSemaphore");
            });
    // Three requests, three events: the fast try and the mutex of the timed one are no events of
    // their own. (No duration is asserted: the budget counts from the call, the event from the
    // observation's start, a moment later.)
  }

  @Test
  void election_aFailedAttemptIsFailedOnce_andItsRetryANewAcquisition() throws Exception {
    CuratorFramework client = zk.newClient();
    Journal journal = new Journal();
    LockObservers.of(client).addListener(journal);
    String path = zk.path("refused");
    CuratorFramework admin = zk.newClient();
    int allButCreate = ZooDefs.Perms.ALL & ~ZooDefs.Perms.CREATE;
    admin
        .create()
        .creatingParentsIfNeeded()
        .withACL(List.of(new ACL(allButCreate, ZooDefs.Ids.ANYONE_ID_UNSAFE)))
        .forPath(path);
    LeaderElection election = LeaderElection.builder(client, path).build();

    election.start();
    await().until(() -> journal.stories().size() >= 2); // failed, and retried after a backoff
    admin.setACL().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(path);
    assertThat(election.awaitLeadership(Duration.ofSeconds(20))).isPresent();
    election.close();

    await().until(() -> journal.stories().get(journal.stories().size() - 1).endsWith("released"));
    List<String> stories = journal.stories();
    assertThat(stories.subList(0, stories.size() - 1)).allMatch("started FAILED"::equals);
    assertThat(stories.get(stories.size() - 1)).isEqualTo("started GRANTED released");
  }
}

package io.lockstep.recipes.locks.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.LockHold;
import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Read sharing (issue 37) beside other processes: Curator's {@code InterProcessReadWriteLock}
 * readers share with the process's read node, its writers are found by the read at the bound and
 * are never starved by readers that keep coming, and no writer of any process ever holds beside a
 * reader.
 */
@Timeout(120)
class ReadSharingInteropTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  // Point 9: Curator's readers share with ours, and its writer waits for our last local reader.
  @Test
  void curatorsReaders_shareWithOurs_andCuratorsWriterWaitsForOurLastReader() throws Exception {
    CuratorFramework observer = zk.newClient();
    ReadWriteMutex ours = sharing(zk.newClient(), 8);
    InterProcessReadWriteLock curator = new InterProcessReadWriteLock(zk.newClient(), path());
    CuratorFramework writerClient = zk.newClient();
    InterProcessReadWriteLock curatorWriter = new InterProcessReadWriteLock(writerClient, path());

    LockHold first = ours.readLock().hold();
    assertThat(curator.readLock().acquire(5, TimeUnit.SECONDS)).isTrue();
    LockHold joined = joined(ours);
    assertThat(nodes(observer, "__READ__")).as("ours, one node; Curator's").hasSize(2);
    try (LockThread writer = new LockThread("curator-writer")) {
      CompletableFuture<Boolean> writing =
          writer.call(() -> curatorWriter.writeLock().acquire(20, TimeUnit.SECONDS));
      await().until(() -> nodes(observer, "__WRIT__").size() == 1);
      first.close();
      curator.readLock().release();
      zk.requestsSoFar(writerClient); // Curator's writer has had its say
      assertThat(writing).as("our joined reader still holds the shared node").isNotDone();
      joined.close();
      assertThat(writing.get(10, TimeUnit.SECONDS)).isTrue();
      writer.run(() -> curatorWriter.writeLock().release()).get(10, TimeUnit.SECONDS);
    }
  }

  // Point 2, Curator's writer: the read after the bound of joins finds it and closes the place.
  @Test
  void theReadAfterTheBoundOfJoins_findsCuratorsWriter_andClosesThePlace() throws Exception {
    CuratorFramework observer = zk.newClient();
    CuratorFramework client = zk.newClient();
    ReadWriteMutex ours = sharing(client, 2);
    InterProcessReadWriteLock curator = new InterProcessReadWriteLock(zk.newClient(), path());
    LockHold first = ours.readLock().hold();
    String node = nodes(observer, "__READ__").get(0);
    // the granting read's child watch fires once, harmlessly: Curator's reader comes and goes, and
    // the read it makes us send finds no writer; the writer below is found by the read at the bound
    long before = zk.requestsSoFar(client);
    InterProcessReadWriteLock passer = new InterProcessReadWriteLock(zk.newClient(), path());
    passer.readLock().acquire();
    passer.readLock().release();
    await().until(() -> zk.requestsSoFar(client) > before);
    try (LockThread writer = new LockThread("curator-writer")) {
      CompletableFuture<Boolean> writing =
          writer.call(() -> curator.writeLock().acquire(20, TimeUnit.SECONDS));
      await().until(() -> nodes(observer, "__WRIT__").size() == 1);
      List<LockHold> holds = new ArrayList<>(List.of(first, joined(ours), joined(ours)));
      CompletableFuture<LockHold> late = ours.readLock().acquireAsync().toCompletableFuture();
      holds.forEach(LockHold::close);

      assertThat(writing.get(10, TimeUnit.SECONDS)).as("the late reader did not join").isTrue();
      assertThat(late).isNotDone();
      await()
          .until(
              () ->
                  nodes(observer, "__READ__").size() == 1
                      && !nodes(observer, "__READ__").contains(node));
      writer.run(() -> curator.writeLock().release()).get(10, TimeUnit.SECONDS);
      late.get(10, TimeUnit.SECONDS).close();
    }
  }

  // Point 9: 8 local threads re-acquiring the read lock in a loop never starve Curator's writer,
  // and none of them reads while it writes.
  @Test
  void curatorsWriter_isGrantedWhileEightLocalReadersLoop_andExcludesThem() throws Exception {
    CuratorFramework local = zk.newClient();
    List<ReadWriteMutex> objects = List.of(sharing(local, 8), sharing(local, 8));
    InterProcessReadWriteLock curator = new InterProcessReadWriteLock(zk.newClient(), path());
    AtomicBoolean stop = new AtomicBoolean();
    AtomicBoolean writing = new AtomicBoolean();
    AtomicInteger violations = new AtomicInteger();
    AtomicLong reads = new AtomicLong();
    AtomicReference<Exception> failure = new AtomicReference<>();
    List<Thread> readers = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      ReadWriteMutex lock = objects.get(i % 2);
      Thread reader =
          new Thread(
              () -> {
                try {
                  while (!stop.get()) {
                    lock.readLock().acquire();
                    try {
                      if (writing.get()) {
                        violations.incrementAndGet();
                      }
                      reads.incrementAndGet();
                    } finally {
                      lock.readLock().release();
                    }
                  }
                } catch (Exception e) {
                  failure.compareAndSet(null, e);
                }
              },
              "looping-reader-" + i);
      readers.add(reader);
      reader.start();
    }
    try {
      for (int round = 0; round < 3; round++) {
        long readsSoFar = reads.get();
        await().until(() -> reads.get() > readsSoFar + 16); // the readers overlap and go on
        assertThat(curator.writeLock().acquire(30, TimeUnit.SECONDS))
            .as("Curator's writer is granted, round " + round)
            .isTrue();
        writing.set(true);
        long readsAtGrant = reads.get();
        await("every local reader waits for the writer")
            .until(() -> readers.stream().allMatch(ReadSharingInteropTest::parked));
        assertThat(reads.get()).as("no read while Curator writes").isEqualTo(readsAtGrant);
        writing.set(false);
        curator.writeLock().release();
      }
    } finally {
      stop.set(true);
      for (Thread reader : readers) {
        reader.join(30_000);
      }
    }
    assertThat(readers).noneMatch(Thread::isAlive);
    assertThat(failure.get()).isNull();
    assertThat(violations).hasValue(0);
  }

  // Point 8: readers and writers of this process (sharing, downgrading), of a plain Lockstep
  // process and of a Curator process never overlap a writer with anyone.
  @Test
  void aMixedFleet_neverLetsAWriterHoldBesideAnyone() throws Exception {
    CuratorFramework local = zk.newClient();
    ReadWriteMutex ours = sharing(local, 2);
    ReadWriteMutex oursToo = sharing(local, 2);
    ReadWriteMutex plain = new ReadWriteMutex(zk.newClient(), path());
    InterProcessReadWriteLock curator = new InterProcessReadWriteLock(zk.newClient(), path());
    Exclusion exclusion = new Exclusion();
    List<LockThread> threads = new ArrayList<>();
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      ReadWriteMutex lock = i % 2 == 0 ? ours : oursToo;
      done.add(loop(threads, "local-reader-" + i, 30, n -> exclusion.read(lock.readLock())));
    }
    done.add(loop(threads, "local-downgrader", 10, n -> exclusion.downgrade(ours)));
    done.add(loop(threads, "local-writer", 10, n -> exclusion.write(oursToo.writeLock())));
    done.add(loop(threads, "plain-reader", 15, n -> exclusion.read(plain.readLock())));
    done.add(loop(threads, "plain-writer", 6, n -> exclusion.write(plain.writeLock())));
    done.add(loop(threads, "curator-reader", 15, n -> exclusion.read(curator.readLock())));
    done.add(loop(threads, "curator-writer", 6, n -> exclusion.write(curator.writeLock())));
    try {
      CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0])).get(100, TimeUnit.SECONDS);
    } finally {
      threads.forEach(LockThread::close);
    }
    assertThat(exclusion.violations).hasValue(0);
    assertThat(exclusion.reads).hasValue(4 * 30 + 10 + 15 + 15);
    assertThat(exclusion.writes).hasValue(10 + 10 + 6 + 6);
  }

  /** Counts who is inside, and every time a writer finds anyone beside it. */
  private static final class Exclusion {
    final AtomicInteger readers = new AtomicInteger();
    final AtomicInteger writers = new AtomicInteger();
    final AtomicInteger violations = new AtomicInteger();
    final AtomicInteger reads = new AtomicInteger();
    final AtomicInteger writes = new AtomicInteger();

    void read(InterProcessLock lock) throws Exception {
      lock.acquire();
      try {
        reading();
      } finally {
        lock.release();
      }
    }

    void write(InterProcessLock lock) throws Exception {
      lock.acquire();
      try {
        writing();
      } finally {
        lock.release();
      }
    }

    /** Writes, takes the read lock, lets the write lock go, and reads on. */
    void downgrade(ReadWriteMutex lock) throws Exception {
      lock.writeLock().acquire();
      boolean writeHeld = true;
      try {
        writing();
        lock.readLock().acquire();
        try {
          lock.writeLock().release();
          writeHeld = false;
          reading();
        } finally {
          lock.readLock().release();
        }
      } finally {
        if (writeHeld) {
          lock.writeLock().release();
        }
      }
    }

    private void reading() {
      readers.incrementAndGet();
      if (writers.get() > 0) {
        violations.incrementAndGet();
      }
      Thread.yield(); // a little time inside, for others to arrive
      if (writers.get() > 0) {
        violations.incrementAndGet();
      }
      readers.decrementAndGet();
      reads.incrementAndGet();
    }

    private void writing() {
      if (writers.incrementAndGet() > 1 || readers.get() > 0) {
        violations.incrementAndGet();
      }
      Thread.yield();
      if (readers.get() > 0) {
        violations.incrementAndGet();
      }
      writers.decrementAndGet();
      writes.incrementAndGet();
    }
  }

  private interface Round {
    void run(int round) throws Exception;
  }

  private static CompletableFuture<Void> loop(
      List<LockThread> threads, String name, int rounds, Round round) {
    LockThread thread = new LockThread(name);
    threads.add(thread);
    return thread.run(
        () -> {
          for (int i = 0; i < rounds; i++) {
            round.run(i);
          }
        });
  }

  /** Whether a thread is parked (waiting for the lock, or for an answer). */
  private static boolean parked(Thread thread) {
    Thread.State state = thread.getState();
    return state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING;
  }

  private static String path() {
    return zk.path("lock");
  }

  private static ReadWriteMutex sharing(CuratorFramework client, int bound) {
    return ReadWriteMutex.builder(client, path()).localHandoff(bound).build();
  }

  private static LockHold joined(ReadWriteMutex lock) throws InterruptedException {
    Optional<LockHold> hold = lock.readLock().tryHold(Duration.ofSeconds(10));
    assertThat(hold).as("a reader joins the granted read node").isPresent();
    return hold.get();
  }

  /** Our and Curator's nodes of {@code kind} in queue order. */
  private static List<String> nodes(CuratorFramework observer, String kind) throws Exception {
    return ZooKeeperExtension.childrenOrNone(observer, path()).stream()
        .filter(node -> node.contains(kind))
        .sorted(Comparator.comparing(node -> node.substring(node.length() - 10)))
        .toList();
  }
}

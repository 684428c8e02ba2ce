package io.lockstep.recipes.locks.interop;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.locks.ReadWriteMutex;
import io.lockstep.testing.LockThread;
import io.lockstep.testing.ZooKeeperExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Curator's {@code InterProcessReadWriteLock} and Lockstep's {@link ReadWriteMutex} on one path:
 * readers share across implementations, writers exclude everyone, and a downgrade on either side
 * holds off a writer on the other.
 */
@Timeout(90)
class CuratorReadWriteInteropTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private InterProcessReadWriteLock curator() {
    return new InterProcessReadWriteLock(zk.newClient(), zk.path("lock"));
  }

  private ReadWriteMutex ours() {
    return new ReadWriteMutex(zk.newClient(), zk.path("lock"));
  }

  @Test
  void readers_shareAcrossImplementations() throws Exception {
    InterProcessReadWriteLock curator = curator();
    ReadWriteMutex ours = ours();

    curator.readLock().acquire();
    assertThat(ours.readLock().acquire(5, TimeUnit.SECONDS)).isTrue();
    curator.readLock().release();
    InterProcessReadWriteLock laterCurator = curator();
    assertThat(laterCurator.readLock().acquire(5, TimeUnit.SECONDS)).isTrue();

    laterCurator.readLock().release();
    ours.readLock().release();
  }

  @Test
  void writers_excludeEveryone_acrossImplementations() throws Exception {
    InterProcessReadWriteLock curator = curator();
    ReadWriteMutex ours = ours();

    curator.writeLock().acquire();
    assertThat(ours.readLock().acquire(200, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(ours.writeLock().acquire(200, TimeUnit.MILLISECONDS)).isFalse();
    curator.writeLock().release();

    ours.writeLock().acquire();
    try (LockThread other = new LockThread("curator")) {
      assertThat(other.call(() -> curator.readLock().acquire(200, TimeUnit.MILLISECONDS)).get())
          .isFalse();
      assertThat(other.call(() -> curator.writeLock().acquire(200, TimeUnit.MILLISECONDS)).get())
          .isFalse();
    }
    ours.writeLock().release();
  }

  @Test
  void ourDowngrade_holdsOffCuratorsWriter() throws Exception {
    InterProcessReadWriteLock curator = curator();
    ReadWriteMutex ours = ours();
    ours.writeLock().acquire();
    ours.readLock().acquire();
    ours.writeLock().release();

    assertThat(curator.writeLock().acquire(300, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(curator.readLock().acquire(5, TimeUnit.SECONDS)).as("readers still share").isTrue();
    curator.readLock().release();
    ours.readLock().release();
    assertThat(curator.writeLock().acquire(5, TimeUnit.SECONDS)).isTrue();
    curator.writeLock().release();
  }

  @Test
  void curatorsDowngrade_holdsOffOurWriter_andLetsOurReadersIn() throws Exception {
    InterProcessReadWriteLock curator = curator();
    ReadWriteMutex ours = ours();
    curator.writeLock().acquire();
    curator.readLock().acquire();
    curator.writeLock().release();

    assertThat(ours.writeLock().acquire(300, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(ours.readLock().acquire(5, TimeUnit.SECONDS)).isTrue();
    ours.readLock().release();
    try (LockThread writer = new LockThread("writer")) {
      CompletableFuture<Boolean> waiting =
          writer.call(() -> ours.writeLock().acquire(10, TimeUnit.SECONDS));
      curator.readLock().release();
      assertThat(waiting.get(10, TimeUnit.SECONDS)).isTrue();
      writer.run(ours.writeLock()::release).get();
    }
  }

  @Test
  void mixedFleet_neverLetsAWriterOverlapAnyone() throws Exception {
    List<InterProcessLock[]> pairs = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      InterProcessReadWriteLock curator = curator();
      ReadWriteMutex ours = ours();
      pairs.add(new InterProcessLock[] {curator.readLock(), curator.writeLock()});
      pairs.add(new InterProcessLock[] {ours.readLock(), ours.writeLock()});
    }
    AtomicInteger readers = new AtomicInteger();
    AtomicInteger writers = new AtomicInteger();
    AtomicInteger violations = new AtomicInteger();
    AtomicInteger maxReaders = new AtomicInteger();
    List<LockThread> threads = new ArrayList<>();
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (InterProcessLock[] pair : pairs) {
      LockThread thread = new LockThread("fleet-" + threads.size());
      threads.add(thread);
      done.add(
          thread.run(
              () -> {
                for (int round = 0; round < 16; round++) {
                  boolean write = round % 4 == 0;
                  InterProcessLock lock = write ? pair[1] : pair[0];
                  lock.acquire();
                  try {
                    if (write) {
                      if (writers.incrementAndGet() > 1 || readers.get() > 0) {
                        violations.incrementAndGet();
                      }
                      writers.decrementAndGet();
                    } else {
                      maxReaders.accumulateAndGet(readers.incrementAndGet(), Math::max);
                      if (writers.get() > 0) {
                        violations.incrementAndGet();
                      }
                      readers.decrementAndGet();
                    }
                  } finally {
                    lock.release();
                  }
                }
              }));
    }
    try {
      CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0])).get(80, TimeUnit.SECONDS);
    } finally {
      threads.forEach(LockThread::close);
    }
    assertThat(violations).hasValue(0);
  }
}

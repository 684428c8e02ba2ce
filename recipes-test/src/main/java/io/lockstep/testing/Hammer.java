package io.lockstep.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.recipes.locks.InterProcessLock;

/**
 * Hammers locks that guard one resource: each lock object acquires and releases in a loop on a
 * thread of its own, and the hammer counts how many holders were ever inside at once.
 */
public final class Hammer {
  private Hammer() {}

  /** What a hammering saw. */
  public record Result(int entries, int mostInsideAtOnce) {}

  /**
   * Runs {@code rounds} acquire/release cycles on every lock, all at once, within {@code seconds}.
   */
  public static Result run(List<? extends InterProcessLock> locks, int rounds, int seconds)
      throws Exception {
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger mostInside = new AtomicInteger();
    AtomicInteger entries = new AtomicInteger();
    List<LockThread> threads = new ArrayList<>();
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (InterProcessLock lock : locks) {
      LockThread thread = new LockThread("hammer-" + threads.size());
      threads.add(thread);
      done.add(
          thread.run(
              () -> {
                for (int round = 0; round < rounds; round++) {
                  lock.acquire();
                  try {
                    mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                    entries.incrementAndGet();
                    inside.decrementAndGet();
                  } finally {
                    lock.release();
                  }
                }
              }));
    }
    try {
      CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0]))
          .get(seconds, TimeUnit.SECONDS);
    } finally {
      threads.forEach(LockThread::close);
    }
    return new Result(entries.get(), mostInside.get());
  }
}

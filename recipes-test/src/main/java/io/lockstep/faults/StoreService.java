package io.lockstep.faults;

import io.lockstep.testing.FencedStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The fenced store the workers write to, in the test process: a {@link FencedStore} resource that
 * accepts a token for a key only if it is at least as high as any it accepted for that key. Each
 * decision is kept, numbered in the order it was taken (the store's commit order) and stamped with
 * the test process's {@code System.nanoTime()}.
 *
 * <p>With fencing off it accepts every token: the mode that proves the checkers can fail.
 */
final class StoreService {
  /** One write the store decided on. */
  record Decision(
      long seq,
      long at,
      int worker,
      String holdKey,
      String resource,
      long token,
      boolean accepted) {}

  private final boolean acceptAll;
  private final FencedStore store = new FencedStore();
  private final ReentrantLock lock = new ReentrantLock();
  private final List<Decision> decisions = new ArrayList<>(); // guarded by lock

  StoreService(boolean acceptAll) {
    this.acceptAll = acceptAll;
  }

  /** Decides on one write; true if accepted. */
  boolean decide(int worker, String holdKey, String resource, long token) {
    lock.lock();
    try {
      boolean accepted = store.write(resource, token) || acceptAll;
      decisions.add(
          new Decision(
              decisions.size(), System.nanoTime(), worker, holdKey, resource, token, accepted));
      return accepted;
    } finally {
      lock.unlock();
    }
  }

  /** Every decision so far, in commit order. */
  List<Decision> decisions() {
    lock.lock();
    try {
      return new ArrayList<>(decisions);
    } finally {
      lock.unlock();
    }
  }
}

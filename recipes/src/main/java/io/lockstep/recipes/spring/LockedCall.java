package io.lockstep.recipes.spring;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockHold;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The hold of the {@link Locked} call running on this thread, for its fencing token: {@code
 * LockedCall.current().fencingToken()}.
 *
 * <p>Calls nest: inside a {@code @Locked} method that calls another {@code @Locked} method (of
 * another bean, through its proxy), {@link #current()} is the inner call's hold until it returns,
 * then the outer call's again. The hold belongs to the call: it is closed when the method returns,
 * so do not keep it, or hand it to work that outlives the call.
 */
public final class LockedCall {
  /** The calls running on each thread, innermost first; removed when the outermost ends. */
  private static final ThreadLocal<Deque<Frame>> CALLS = new ThreadLocal<>();

  /** One running call: the lock it holds, and its hold (maybe an outer call's, see Locked). */
  record Frame(FencedLock lock, LockHold hold) {}

  private LockedCall() {}

  /**
   * The hold of the innermost {@link Locked} call running on this thread.
   *
   * @return the hold; its {@link LockHold#fencingToken()} fences the method's writes
   * @throws IllegalStateException if no {@code @Locked} call runs on this thread
   */
  public static LockHold current() {
    Deque<Frame> calls = CALLS.get();
    if (calls == null) {
      throw new IllegalStateException(
          "No @Locked call runs on this thread: LockedCall.current() is for the body of a"
              + " @Locked method called through its Spring proxy");
    }
    return calls.peek().hold();
  }

  /**
   * The hold of the innermost {@link Locked} call running on this thread, if one runs: for code
   * that serves both {@code @Locked} callers and others (as the fencing headers of {@code
   * io.lockstep.recipes.fence.http} do).
   *
   * @return the hold, or empty outside a {@code @Locked} call
   */
  public static Optional<LockHold> find() {
    Deque<Frame> calls = CALLS.get();
    return calls == null ? Optional.empty() : Optional.of(calls.peek().hold());
  }

  /** The hold of {@code lock} taken by a call running on this thread, or null. */
  static LockHold heldOnThisThread(FencedLock lock) {
    Deque<Frame> calls = CALLS.get();
    if (calls != null) {
      for (Frame frame : calls) {
        if (frame.lock() == lock) {
          return frame.hold();
        }
      }
    }
    return null;
  }

  /** A call starts on this thread. */
  static void push(FencedLock lock, LockHold hold) {
    Deque<Frame> calls = CALLS.get();
    if (calls == null) {
      calls = new ArrayDeque<>();
      CALLS.set(calls);
    }
    calls.push(new Frame(lock, hold));
  }

  /** The innermost call on this thread ends. */
  static void pop() {
    Deque<Frame> calls = CALLS.get();
    calls.pop();
    if (calls.isEmpty()) {
      CALLS.remove(); // nothing stays behind on a pooled thread
    }
  }
}

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
 * then the outer call's again. The hold belongs to the call: it is closed when the method returns
 * (or kept a little longer for its {@link Locked#holdAtLeast()}, then closed by Lockstep), so do
 * not keep it, or hand it to work that outlives the call. A method with a {@link Locked#ttl()}
 * learns of a hold given up at its deadline through the hold ({@code checkHeld()}, {@code
 * whenLost()}), and may move the deadline with {@link #renew()}.
 */
public final class LockedCall {
  /** The calls running on each thread, innermost first; removed when the outermost ends. */
  private static final ThreadLocal<Deque<Frame>> CALLS = new ThreadLocal<>();

  /** One running call: the lock it holds, and its hold (maybe an outer call's, see Locked). */
  record Frame(FencedLock lock, CallHold call) {}

  private LockedCall() {}

  /**
   * The hold of the innermost {@link Locked} call running on this thread.
   *
   * @return the hold; its {@link LockHold#fencingToken()} fences the method's writes
   * @throws IllegalStateException if no {@code @Locked} call runs on this thread
   */
  public static LockHold current() {
    return innermost("current()").hold();
  }

  /**
   * Moves the time-to-live deadline of the innermost {@link Locked} call's hold to its {@link
   * Locked#ttl() time to live} from now: a heartbeat from a long method, so that only a run that
   * stops calling it (stuck, say) loses its hold when the time to live runs out. Nothing is sent to
   * ZooKeeper: the deadline is kept in this process.
   *
   * @throws IllegalStateException if no {@code @Locked} call runs on this thread, or its method has
   *     no time to live
   * @throws io.lockstep.recipes.locks.LockOwnershipLostException if the hold was lost, also when
   *     its time to live ran out before this call
   */
  public static void renew() {
    innermost("renew()").renew();
  }

  private static CallHold innermost(String method) {
    Deque<Frame> calls = CALLS.get();
    if (calls == null) {
      throw new IllegalStateException(
          "No @Locked call runs on this thread: LockedCall."
              + method
              + " is for the body of a @Locked method called through its Spring proxy");
    }
    return calls.peek().call();
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
    return calls == null ? Optional.empty() : Optional.of(calls.peek().call().hold());
  }

  /** The hold of {@code lock} taken by a call running on this thread, or null. */
  static CallHold heldOnThisThread(FencedLock lock) {
    Deque<Frame> calls = CALLS.get();
    if (calls != null) {
      for (Frame frame : calls) {
        if (frame.lock() == lock) {
          return frame.call();
        }
      }
    }
    return null;
  }

  /** A call starts on this thread. */
  static void push(FencedLock lock, CallHold call) {
    Deque<Frame> calls = CALLS.get();
    if (calls == null) {
      calls = new ArrayDeque<>();
      CALLS.set(calls);
    }
    calls.push(new Frame(lock, call));
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

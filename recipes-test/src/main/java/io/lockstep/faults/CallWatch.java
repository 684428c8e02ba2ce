package io.lockstep.faults;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Catches a worker's timed call in the act of overrunning its budget: a daemon thread looks at the
 * calls under way every {@value #TICK_MS} ms, and when one is still running {@value #LATE_MS} ms
 * after its budget (the library's grace plus its fallback's), it reports an {@code overrun} event
 * ({@code thread}, then where the calling thread is, innermost frame first, frames joined by {@code
 * <}) and prints every thread's stack to the worker's log. The budget check names that place when
 * it finds the call over its limit, so a run that fails once on a loaded machine says where the
 * time went.
 */
final class CallWatch implements Runnable {
  /** How often the watch looks. */
  static final long TICK_MS = 20;

  /** How long past its budget a call is reported: the grace, twice (the caller's fallback). */
  static final long LATE_MS = 2 * Bounds.GRACE_MS;

  /** How many frames of the calling thread an {@code overrun} event carries. */
  static final int FRAMES = 30;

  private final EventChannel events;
  private final Set<Call> calls = ConcurrentHashMap.newKeySet();

  private CallWatch(EventChannel events) {
    this.events = events;
  }

  /** Starts a watch reporting to {@code events}, in a daemon thread of its own. */
  static CallWatch start(EventChannel events) {
    CallWatch watch = new CallWatch(events);
    Thread thread = new Thread(watch, "call-watch");
    thread.setDaemon(true);
    thread.start();
    return watch;
  }

  /**
   * A timed call the current thread starts now ({@code budgetMs} below 0: untimed, not watched).
   */
  Call watch(String thread, int budgetMs) {
    Call call = new Call(Thread.currentThread(), thread, budgetMs, System.nanoTime());
    if (budgetMs >= 0) {
      calls.add(call);
    }
    return call;
  }

  @Override
  public void run() {
    try {
      while (true) {
        TimeUnit.MILLISECONDS.sleep(TICK_MS);
        long now = System.nanoTime();
        for (Call call : calls) {
          if (now - call.due > 0 && calls.remove(call)) {
            report(call);
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void report(Call call) {
    StackTraceElement[] frames = call.caller.getStackTrace();
    events.send("overrun", call.thread, frames(frames));
    StringBuilder dump =
        new StringBuilder("call-watch: ")
            .append(call.thread)
            .append("'s call with a budget of ")
            .append(call.budgetMs)
            .append(" ms is still running ")
            .append(LATE_MS)
            .append(" ms after it; every thread:\n");
    for (ThreadInfo info : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
      dump.append(info.getThreadName()).append(" (").append(info.getThreadState()).append(")\n");
      for (StackTraceElement frame : info.getStackTrace()) {
        dump.append("\tat ").append(frame).append('\n');
      }
    }
    System.err.print(dump);
  }

  /** {@code Class.method:line} per frame, innermost first, no spaces, joined by {@code <}. */
  static String frames(StackTraceElement[] frames) {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < Math.min(FRAMES, frames.length); i++) {
      String type = frames[i].getClassName();
      if (text.length() > 0) {
        text.append('<');
      }
      text.append(type.substring(type.lastIndexOf('.') + 1))
          .append('.')
          .append(frames[i].getMethodName())
          .append(':')
          .append(frames[i].getLineNumber());
    }
    return text.length() == 0 ? "-" : text.toString().replaceAll("\\s+", "");
  }

  /** One call under way. */
  final class Call {
    private final Thread caller;
    private final String thread;
    private final int budgetMs;
    private final long start;
    private final long due;

    private Call(Thread caller, String thread, int budgetMs, long start) {
      this.caller = caller;
      this.thread = thread;
      this.budgetMs = budgetMs;
      this.start = start;
      this.due = start + TimeUnit.MILLISECONDS.toNanos(budgetMs + LATE_MS);
    }

    /** The call returned: no longer watched. @return how long it took, in nanoseconds */
    long end() {
      long took = System.nanoTime() - start;
      calls.remove(this);
      return took;
    }
  }
}

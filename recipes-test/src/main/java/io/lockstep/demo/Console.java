package io.lockstep.demo;

import java.io.PrintStream;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The demo's output: lines that stay, and one status line that a terminal redraws in place (where
 * the output is not a terminal, each status is printed as a line of its own).
 */
final class Console {
  private final PrintStream out;
  private final boolean live;
  private final ReentrantLock lock = new ReentrantLock();
  private String status = ""; // guarded by lock: the status line now on screen, "" if none

  /**
   * @param out where to print
   * @param live whether {@code out} is a terminal that understands a carriage return
   */
  Console(PrintStream out, boolean live) {
    this.out = out;
    this.live = live;
  }

  /** Whether statuses are redrawn in place. */
  boolean live() {
    return live;
  }

  /** Prints a line that stays, above the status line. */
  void line(String text) {
    lock.lock();
    try {
      if (live && !status.isEmpty()) {
        out.print("\r" + " ".repeat(status.length()) + "\r");
      }
      out.println(text);
      if (live && !status.isEmpty()) {
        out.print(status);
      }
      out.flush();
    } finally {
      lock.unlock();
    }
  }

  /** Shows the status line: redrawn in place on a terminal, else printed as a line. */
  void status(String text) {
    lock.lock();
    try {
      if (live) {
        out.print("\r" + text + " ".repeat(Math.max(0, status.length() - text.length())));
        status = text;
      } else {
        out.println(text);
      }
      out.flush();
    } finally {
      lock.unlock();
    }
  }

  /** Leaves the status line as it is and moves below it. */
  void endStatus() {
    lock.lock();
    try {
      if (live && !status.isEmpty()) {
        out.println();
        status = "";
      }
      out.flush();
    } finally {
      lock.unlock();
    }
  }
}

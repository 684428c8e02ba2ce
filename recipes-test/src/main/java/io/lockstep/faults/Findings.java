package io.lockstep.faults;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What the checks of a run found: violations (each under the name of the check that found it),
 * figures (counts by name, in the order first counted) and notes (suspicious behaviour that is not
 * a violation, to report).
 */
final class Findings {
  /** One violation: the check that found it and what it found. */
  record Violation(String check, String detail) {
    @Override
    public String toString() {
      return check + ": " + detail;
    }
  }

  private final ReentrantLock lock = new ReentrantLock();
  private final List<Violation> violations = new ArrayList<>(); // guarded by lock
  private final Map<String, Long> figures = new LinkedHashMap<>(); // guarded by lock
  private final List<String> notes = new ArrayList<>(); // guarded by lock

  void violation(String check, String detail) {
    lock.lock();
    try {
      violations.add(new Violation(check, detail));
    } finally {
      lock.unlock();
    }
  }

  void add(String figure, long amount) {
    lock.lock();
    try {
      figures.merge(figure, amount, Long::sum);
    } finally {
      lock.unlock();
    }
  }

  void increment(String figure) {
    add(figure, 1);
  }

  /** Keeps the larger of the figure and {@code value}. */
  void max(String figure, long value) {
    lock.lock();
    try {
      figures.merge(figure, value, Math::max);
    } finally {
      lock.unlock();
    }
  }

  void note(String note) {
    lock.lock();
    try {
      notes.add(note);
    } finally {
      lock.unlock();
    }
  }

  List<Violation> violations() {
    lock.lock();
    try {
      return List.copyOf(violations);
    } finally {
      lock.unlock();
    }
  }

  /** The violations found by {@code check}. */
  List<Violation> violations(String check) {
    return violations().stream().filter(v -> v.check().equals(check)).toList();
  }

  Map<String, Long> figures() {
    lock.lock();
    try {
      return new LinkedHashMap<>(figures);
    } finally {
      lock.unlock();
    }
  }

  long figure(String name) {
    return figures().getOrDefault(name, 0L);
  }

  List<String> notes() {
    lock.lock();
    try {
      return List.copyOf(notes);
    } finally {
      lock.unlock();
    }
  }
}

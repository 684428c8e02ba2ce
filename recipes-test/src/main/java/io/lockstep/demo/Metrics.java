package io.lockstep.demo;

import io.lockstep.recipes.locks.LockState;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * What one run of the workload counted, updated by every worker at once: per operation the
 * completed operations and acquire latencies, and for the run the lock notices, fenced writes and
 * audits.
 */
final class Metrics {
  private static final long MAX_LATENCY_MICROS = TimeUnit.MINUTES.toMicros(10);
  private static final int KEPT_PROBLEMS = 3;

  private final Map<Operation, PerOperation> operations = new EnumMap<>(Operation.class);

  /** Lock holds reported lost by their lock's state listener. */
  final LongAdder losses = new LongAdder();

  /** Lock holds reported at risk (connection suspended) by their lock's state listener. */
  final LongAdder atRisk = new LongAdder();

  /** Fenced transactions that the database refused: a newer holder's token had been admitted. */
  final LongAdder refused = new LongAdder();

  /** Unfenced writes that committed although the writer's session had ended (Curator). */
  final LongAdder staleCommitted = new LongAdder();

  /** Writes not attempted because the lock had already reported its loss. */
  final LongAdder skipped = new LongAdder();

  /** Transactions committed by the database. */
  final LongAdder committed = new LongAdder();

  /** Audits whose sum was the bank's total and no balance negative. */
  final LongAdder auditsBalanced = new LongAdder();

  /** Audits that found a wrong sum or a negative balance. */
  final LongAdder auditsUnbalanced = new LongAdder();

  /** Audits thrown away because their read locks were lost during the reading. */
  final LongAdder auditsDiscarded = new LongAdder();

  /** Faults injected so far (servers killed, sessions expired). */
  final LongAdder faults = new LongAdder();

  private final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
  private final LongAdder problemCount = new LongAdder();

  Metrics() {
    for (Operation operation : Operation.values()) {
      operations.put(operation, new PerOperation());
    }
  }

  PerOperation of(Operation operation) {
    return operations.get(operation);
  }

  /** Counts a lock's state change. */
  void heard(LockState state) {
    if (state == LockState.LOST) {
      losses.increment();
    } else if (state == LockState.AT_RISK) {
      atRisk.increment();
    }
  }

  /** Operations completed, all kinds together. */
  long completed() {
    return operations.values().stream().mapToLong(o -> o.completed.sum()).sum();
  }

  /** Counts a problem and keeps the first few descriptions, for the report. */
  void problem(String description) {
    problemCount.increment();
    if (problems.size() < KEPT_PROBLEMS) {
      problems.add(description);
    }
  }

  /** The first few problems described, and how many more there were. */
  List<String> problems() {
    List<String> kept = new ArrayList<>(problems);
    long more = problemCount.sum() - kept.size();
    if (more > 0) {
      kept.add("... and " + more + " more");
    }
    return kept;
  }

  /** The counts and acquire latencies of one operation. */
  static final class PerOperation {
    /** Operations done: written, declined for want of money, or audited. */
    final LongAdder completed = new LongAdder();

    /** Operations that found too little money and wrote nothing. */
    final LongAdder declined = new LongAdder();

    /** Acquires that ran out of time. */
    final LongAdder timeouts = new LongAdder();

    /** Operations that failed with a ZooKeeper error. */
    final LongAdder errors = new LongAdder();

    private final Histogram acquireMicros = new ConcurrentHistogram(MAX_LATENCY_MICROS, 3);

    /** Records how long a successful acquire took. */
    void acquired(long nanos) {
      acquireMicros.recordValue(Math.min(MAX_LATENCY_MICROS, TimeUnit.NANOSECONDS.toMicros(nanos)));
    }

    /** The acquire latency at {@code percentile} (0 to 100), in microseconds; 0 if none. */
    long acquireMicros(double percentile) {
      return acquireMicros.getTotalCount() == 0
          ? 0
          : acquireMicros.getValueAtPercentile(percentile);
    }
  }
}

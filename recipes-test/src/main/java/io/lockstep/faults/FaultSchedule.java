package io.lockstep.faults;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Which faults a run injects, and when: fixed waves (the short run: each wave's faults at once, on
 * different groups, then the next wave once every group grants again), or a seeded random sequence
 * for a given time (the long run: one fault at a time, the kinds the run's servers allow in rounds
 * of a shuffled order, each on a random group it applies to, a freeze half the time past the
 * session and half the time within it).
 */
abstract class FaultSchedule {
  /** Waits, after faults healed at {@code healedAt}, until every group grants again (bounded). */
  interface Recovery {
    void await(long healedAt) throws InterruptedException;
  }

  abstract void run(Faults faults, Recovery recovery) throws InterruptedException, IOException;

  /** Waves of faults injected at once. */
  static FaultSchedule waves(List<List<FaultStep>> waves) {
    return new Waves(waves);
  }

  /** Random faults of {@code kinds} on {@code groups} for {@code duration}, from {@code seed}. */
  static FaultSchedule random(
      Duration duration, long seed, List<FaultKind> kinds, List<GroupSpec> groups) {
    return new RandomFaults(duration, seed, kinds, groups);
  }

  private static final class Waves extends FaultSchedule {
    private final List<List<FaultStep>> waves;

    Waves(List<List<FaultStep>> waves) {
      this.waves = List.copyOf(waves);
    }

    @Override
    void run(Faults faults, Recovery recovery) throws InterruptedException, IOException {
      ExecutorService pool = Executors.newCachedThreadPool();
      try {
        for (List<FaultStep> wave : waves) {
          List<Future<Optional<FaultRecord>>> running = new ArrayList<>();
          for (FaultStep step : wave) {
            running.add(pool.submit(() -> faults.inject(step)));
          }
          long healed = System.nanoTime();
          for (Future<Optional<FaultRecord>> fault : running) {
            Optional<FaultRecord> record = get(fault);
            if (record.isPresent()) {
              healed = Math.max(healed, record.get().heal());
            }
          }
          recovery.await(healed);
        }
      } finally {
        pool.shutdownNow();
      }
    }

    private static Optional<FaultRecord> get(Future<Optional<FaultRecord>> fault)
        throws InterruptedException, IOException {
      try {
        return fault.get();
      } catch (ExecutionException e) {
        if (e.getCause() instanceof IOException io) {
          throw io;
        }
        throw new IllegalStateException("a fault failed", e.getCause());
      }
    }
  }

  private static final class RandomFaults extends FaultSchedule {
    private final Duration duration;
    private final Random random;
    private final List<FaultKind> kinds;
    private final List<GroupSpec> groups;

    RandomFaults(Duration duration, long seed, List<FaultKind> kinds, List<GroupSpec> groups) {
      this.duration = duration;
      this.random = new Random(seed);
      this.kinds = List.copyOf(kinds);
      this.groups = List.copyOf(groups);
    }

    @Override
    void run(Faults faults, Recovery recovery) throws InterruptedException, IOException {
      long end = System.nanoTime() + duration.toNanos();
      List<FaultKind> deck = new ArrayList<>();
      while (System.nanoTime() - end < 0) {
        if (deck.isEmpty()) {
          deck.addAll(kinds);
          Collections.shuffle(deck, random);
        }
        FaultKind kind = deck.remove(deck.size() - 1);
        List<GroupSpec> fitting = groups.stream().filter(g -> fits(kind, g)).toList();
        if (kind.process() && fitting.isEmpty()) {
          continue;
        }
        String group = kind.process() ? fitting.get(random.nextInt(fitting.size())).name() : null;
        Optional<FaultRecord> record = faults.inject(new FaultStep(kind, group, length(kind)));
        recovery.await(record.map(FaultRecord::heal).orElse(System.nanoTime()));
        TimeUnit.MILLISECONDS.sleep(500 + random.nextInt(1_500)); // a quiet gap between faults
      }
    }

    /** Whether {@code kind} can aim at {@code group}. */
    static boolean fits(FaultKind kind, GroupSpec group) {
      return switch (kind) {
        case FREEZE_LEADER -> group.role() == RoleKind.ELECTION;
        case FREEZE_LINGERER -> group.role() == RoleKind.LINGER;
        case FREEZE_HOLDER -> group.role() != RoleKind.ELECTION;
        case FREEZE_WAITER ->
            group.role() != RoleKind.ELECTION
                && group.role() != RoleKind.SEMAPHORE
                && group.role() != RoleKind.LINGER; // lingering members seldom queue
        default -> true;
      };
    }

    /** A freeze's length or a downtime: half the time past the session, half within it. */
    private long length(FaultKind kind) {
      if (kind == FaultKind.KILL_HOLDER || kind == FaultKind.CLIENT_EXPIRY) {
        return 0;
      }
      if (kind == FaultKind.SERVER_RESTART) {
        return 500 + random.nextInt(6_000);
      }
      return random.nextBoolean()
          ? Bounds.PAST_SESSION_MS + random.nextInt(1_500)
          : 500 + random.nextInt(2_000);
    }
  }
}

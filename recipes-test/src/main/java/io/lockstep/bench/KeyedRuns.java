package io.lockstep.bench;

import java.time.Duration;
import java.time.Instant;

/** Runs the keyed section and records when and with what, for its block ({@link KeyedTables}). */
final class KeyedRuns {
  /** The one-client and contended key counts of a quick run. */
  static final int QUICK_KEYS = 10_000;

  static final int QUICK_CONTENDED_KEYS = 2_000;

  /** The counts of a full run: the million keys and hundred thousand contended ones. */
  static final int FULL_KEYS = 1_000_000;

  static final int FULL_CONTENDED_KEYS = 100_000;

  private KeyedRuns() {}

  /**
   * Runs the section.
   *
   * @param settings quick or full
   * @param keys the one-client keys, or -1 for the mode's count
   * @param contendedKeys the four-client keys, or -1 for the mode's count
   */
  static KeyedTables.Run run(SuiteSettings settings, int keys, int contendedKeys) throws Exception {
    boolean full = settings.mode().equals("full");
    int oneClient = keys > 0 ? keys : full ? FULL_KEYS : QUICK_KEYS;
    int contended =
        contendedKeys > 0 ? contendedKeys : full ? FULL_CONTENDED_KEYS : QUICK_CONTENDED_KEYS;
    Instant started = Instant.now();
    String loadBefore = MachineInfo.loadAverage();
    var results = KeyedScenario.run(oneClient, contended);
    return new KeyedTables.Run(
        BenchmarkSuite.date(started),
        Duration.between(started, Instant.now()),
        loadBefore,
        MachineInfo.loadAverage(),
        oneClient,
        contended,
        results);
  }
}

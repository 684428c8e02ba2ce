package io.lockstep.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.bench.BenchmarkPage.Block;
import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.io.IOException;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The uncontended block: its own run line, the bytes allocated per cycle beside the rates, and the
 * allocation goal met or missed.
 */
@Timeout(10)
class UncontendedBlockTest {
  private static final SuiteResults.Row MUTEX = new SuiteResults.Row(Recipe.MUTEX, 1);

  @Test
  void theUncontendedBlock_saysItsOwnRun_andTheBytesAllocatedPerCycle() {
    var blocks = SuiteFixtures.page(SuiteFixtures.everyGoalMet()).blocks();

    assertThat(blocks.get(Block.UNCONTENDED))
        .startsWith(
            "Measured 2026-01-05T00:00:00 UTC (2.0 min): `mvn -B -Pbench verify`, from the"
                + " repository root; load average before: 0.50 / 0.40 / 0.30, after: 0.60 / 0.40 /"
                + " 0.30; machine shared: no.\n\nQuick mode: JMH with 1 warm-up and 3 measured"
                + " iterations of 1 s, 1 fork, and its GC profiler; requests counted over 20 cycles"
                + " a row.\n\n")
        .contains(
            "| response bytes per cycle, Curator / Lockstep | bytes allocated per cycle, Curator /"
                + " Lockstep |")
        .contains(
            "| mutex | `InterProcessMutex` | `ReentrantMutex` | 100 ± 5 | 1,000 ± 5 | 10.00× |"
                + " 3 (2) / 3 (2) | 300 / 250 | 5,000 / 4,000 |")
        .doesNotContain("Not measured in this run");
    assertThat(blocks.get(Block.GOALS))
        .contains(
            "| Allocations per uncontended cycle at most Curator's on every single-path row | all 4"
                + " rows (bytes per cycle, Lockstep / Curator: mutex 4,000 / 5,000; non-reentrant"
                + " mutex 4,000 / 5,000; read lock 4,000 / 5,000; write lock 4,000 / 5,000) | met |");
  }

  @Test
  void moreBytesPerCycleThanCurators_isAMissedGoal_listedWithItsFigures() {
    SuiteResults results = new SuiteResults();
    results.score(MUTEX, Library.CURATOR, new SuiteResults.Score(1_000, 10, 5_000));
    results.score(MUTEX, Library.LOCKSTEP, new SuiteResults.Score(1_100, 10, 6_000));

    var blocks = SuiteFixtures.page(results).blocks();

    assertThat(blocks.get(Block.GOALS))
        .contains(
            "| Allocations per uncontended cycle at most Curator's on every single-path row | 0 of 1"
                + " rows; missed on mutex (bytes per cycle, Lockstep / Curator: mutex 6,000 /"
                + " 5,000) | **missed** |");
    assertThat(blocks.get(Block.MISSED))
        .contains(
            "| bytes allocated per cycle, mutex | 1.20× | bytes allocated per cycle 6,000 / 5,000"
                + " | [more allocation](#more-allocation) |");
    assertThat(blocks.get(Block.UNCONTENDED))
        .contains("| 1,000 ± 10 | 1,100 ± 10 | 1.10× | | | 5,000 / 6,000 |")
        .contains(
            "*Not measured in this run: non-reentrant mutex; read lock; write lock; multi-lock,"
                + " K = 1; multi-lock, K = 4; multi-lock, K = 8; multi-lock, K = 16.*");
  }

  @Test
  void scoresWithoutAnAllocationFigure_leaveItsCellAndTheGoalOut() {
    SuiteResults results = new SuiteResults();
    results.score(MUTEX, Library.CURATOR, new SuiteResults.Score(1_000, 10));
    results.score(MUTEX, Library.LOCKSTEP, new SuiteResults.Score(1_100, 10));

    var blocks = SuiteFixtures.page(results).blocks();

    assertThat(blocks.get(Block.UNCONTENDED)).contains("| 1.10× | | | |");
    assertThat(blocks.get(Block.GOALS)).doesNotContain("Allocations per uncontended cycle");
  }

  @Test
  void anUpdate_ofTheUncontendedRows_replacesTheirBlockOnly() throws IOException {
    String filled =
        SuiteFixtures.page(SuiteFixtures.everyGoalMet()).fill(BenchmarkPageTest.docsPage());
    SuiteResults results = new SuiteResults();
    results.score(MUTEX, Library.CURATOR, new SuiteResults.Score(700, 10, 7_000));
    results.score(MUTEX, Library.LOCKSTEP, new SuiteResults.Score(800, 10, 6_000));
    results.uncontendedRun = SuiteFixtures.uncontendedRun();

    String updated = SuiteFixtures.page(results).fill(filled, EnumSet.of(Block.UNCONTENDED));

    assertThat(BenchmarkPageTest.blockOf(updated, Block.UNCONTENDED))
        .contains("Measured 2026-01-05T00:00:00 UTC")
        .contains("| 700 ± 10 | 800 ± 10 | 1.14× | | | 7,000 / 6,000 |");
    assertThat(BenchmarkPageTest.withoutBlock(updated, Block.UNCONTENDED))
        .isEqualTo(BenchmarkPageTest.withoutBlock(filled, Block.UNCONTENDED));
  }
}

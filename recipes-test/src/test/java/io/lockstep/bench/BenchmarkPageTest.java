package io.lockstep.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.bench.BenchmarkPage.Block;
import io.lockstep.bench.GoalVerdicts.Reason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The page's layout: blocks filled into the hand-written docs page, the rest left alone. */
@Timeout(10)
class BenchmarkPageTest {
  private static final Path DOCS_PAGE = Path.of("..", "docs", "benchmarks.md");

  static String docsPage() throws IOException {
    return Files.readString(DOCS_PAGE);
  }

  /** The page with every generated block emptied: what is written by hand. */
  private static String prose(String page) {
    String prose = page;
    for (Block block : Block.values()) {
      prose =
          Pattern.compile(
                  Pattern.quote(block.begin()) + ".*?" + Pattern.quote(block.end()), Pattern.DOTALL)
              .matcher(prose)
              .replaceAll("[" + block.id() + "]");
    }
    return prose;
  }

  @Test
  void theDocsPage_hasEveryBlockOnceInOrder_andAHeadingForEveryReason() throws IOException {
    String page = docsPage();
    int last = -1;
    for (Block block : Block.values()) {
      int begin = page.indexOf(block.begin());
      assertThat(begin).as(block.begin()).isGreaterThan(last);
      assertThat(page.indexOf(block.begin(), begin + 1)).as("once: " + block.id()).isNegative();
      last = page.indexOf(block.end());
      assertThat(last).as(block.end()).isGreaterThan(begin);
    }
    for (Reason reason : Reason.values()) {
      assertThat(page).containsIgnoringCase("\n### " + reason.label() + "\n");
    }
  }

  @Test
  void filling_replacesOnlyTheBlocks_andIsRepeatable() throws IOException {
    String page = docsPage();
    BenchmarkPage run = SuiteFixtures.page(SuiteFixtures.everyGoalMet());

    String filled = run.fill(page);

    assertThat(prose(filled)).isEqualTo(prose(page));
    assertThat(run.fill(filled)).isEqualTo(filled);
    assertThat(filled)
        .contains("| Date | 2026-01-01T00:00:00 UTC, quick mode, 3.0 min |")
        .contains("| Machine shared | no |")
        .contains("| Throughput at least Curator's on every row | all ")
        .contains("| every goal | met | | |")
        .doesNotContain("Not measured in this run");
  }

  @Test
  void theFenceBlock_saysItsRun_andWhatTheAdmissionAdds() {
    var blocks = SuiteFixtures.page(SuiteFixtures.everyGoalMet()).blocks();

    assertThat(blocks.get(Block.FENCE))
        .startsWith("Measured 2026-01-06T00:00:00 UTC (3.0 min): `")
        .contains("JMH: 3 warm-up and 5 measured iterations of 2 s, 1 fork")
        .contains("H2 2.5.252 in memory; PostgreSQL 17.5 on the loopback address.")
        .contains("| H2, in memory | `UPDATE`, `COMMIT` | 10 ± 0.50 | 100,000 | |")
        .contains(
            "| H2, in memory | `admit` (a new token) + `UPDATE`, `COMMIT` | 12 ± 0.50 | 83,333 |"
                + " +2 µs (+20%) |")
        .contains(
            "| PostgreSQL, `synchronous_commit = on` | `admit` (the same token) + `UPDATE`,"
                + " `COMMIT` | 1,200 ± 0.50 | 833 | +200 µs (+20%) |");
  }

  @Test
  void aPartialRun_saysWhichSectionsItDidNotMeasure() {
    SuiteResults results = new SuiteResults();
    results.multi.add(SuiteFixtures.load(io.lockstep.testing.Library.CURATOR, 8, 400, 14));
    results.multi.add(SuiteFixtures.load(io.lockstep.testing.Library.LOCKSTEP, 8, 1_400, 6));

    var blocks = SuiteFixtures.page(results).blocks();

    assertThat(blocks.get(Block.MULTI_CONTENTION)).contains("| 8, 4 of 16 | 400 | 1,400 | 3.50× |");
    assertThat(blocks.get(Block.UNCONTENDED)).isEqualTo("*Not measured in this run.*\n");
    assertThat(blocks.get(Block.HANDOFF)).isEqualTo("*Not measured in this run.*\n");
  }

  @Test
  void theContentionTable_hasAColumnPerContender_andCuratorAsTheBaseline() {
    var blocks = SuiteFixtures.page(SuiteFixtures.everyGoalMet()).blocks();

    assertThat(blocks.get(Block.CONTENTION))
        .contains(
            "| T | Curator acquisitions/s | Lockstep acquisitions/s | Lockstep ÷ Curator | Curator"
                + " p50 / p99 / p999 (ms) | Lockstep p50 / p99 / p999 (ms) | requests per"
                + " acquisition, Curator / Lockstep |")
        .contains(
            "| 8 | 1,000 | 1,100 | 1.10× | 2.00 / 2.00 / 2.00 | 2.00 / 2.00 / 2.00 | 3.00 /"
                + " 3.00 |");
  }

  @Test
  void theServiceSections_renderTheirFigures() {
    var blocks = SuiteFixtures.page(SuiteFixtures.everyGoalMet()).blocks();

    assertThat(blocks.get(Block.SLOW_LINK))
        .contains(
            "0.10 ms straight to the server; through the proxy, 0.30 ms with 0 ms added,"
                + " 1.30 ms with 1 ms added")
        .contains("| mutex | 0 ms | 800 ± 10 | 900 ± 10 | 1.13× | |")
        .contains("| mutex | 1 ms | 250 ± 10 | 350 ± 10 | 1.40× | 2.75 / 1.75 |");
    assertThat(blocks.get(Block.RECORDING))
        .contains(
            "| mutex | 1,000 ± 10 | 995 ± 10 | 1.00× (within error) | 1,000 ± 10 | 990 ± 10 |"
                + " 0.99× (within error) | 2,000 | 3.00 / 3.00 |");
    assertThat(blocks.get(Block.WAITERS))
        .contains(
            "| 1,000 | Lockstep: `acquireAsync()`, no thread | 100 | 1,000 | 1,000 | 2,000 |"
                + " 0.002 | 14 | 2.00 | 300 | yes |")
        .contains(
            "| 10,000 | Curator: `InterProcessMutex.acquire()`, a thread each | not run: above"
                + " `--curator-waiters` |");
    assertThat(blocks.get(Block.WATCHES))
        .contains(
            "| 8, a client each, 800 acquisitions | 0.90 (0.90 / 0.00 / 0.00) | 0.80 (0.80 /"
                + " 0.00 / 0.00) | 3.00 / 3.00 |");
    assertThat(blocks.get(Block.GOALS))
        .contains(
            "| At 1 ms added round trip, at least 1.30× Curator's `InterProcessMutex` | 1.40×"
                + " (round trips per cycle: 1.75 / 2.75, Lockstep / Curator) | met |")
        .contains(
            "| Draining 10,000 asynchronous waiters of one client takes at most 12.00× as"
                + " long as 1,000 | 11,000 ms against 1,000 ms (11.00×) | met |")
        .contains(
            "| Watch events per acquisition, 8 clients on one lock: at most Curator's | 0.80"
                + " against 0.90 (640 against 720 events in 800 acquisitions) | met |");
  }

  @Test
  void theCohortSection_rendersRatesAndFairness_andJudgesLocalHandoffPerRoundTrip() {
    SuiteResults results = SuiteFixtures.everyGoalMet();
    var blocks = SuiteFixtures.page(results).blocks();

    assertThat(blocks.get(Block.COHORT))
        .contains("| 0 ms | Curator | 1,000 | 1.00× | 2.00 / 2.00 / 2.00 | 3.00 |")
        .contains("| 1 ms | Lockstep, local handoff | 2,400 | 12.00× | 2.00 / 2.00 / 2.00 | 0.40 |")
        .contains("| 0 ms | Lockstep, local handoff | 1 of 901 (0.001) | 8 (8) | 3.00 (3.00) |");
    assertThat(blocks.get(Block.GOALS))
        .contains(
            "| At least 5× Curator's mutex, 8 threads on one client, at 0 ms added round trip"
                + " (Lockstep with local handoff) | 6.00× | met |")
        .contains("at 1 ms added round trip (Lockstep with local handoff) | 12.00× | met |");

    SuiteResults slow = new SuiteResults();
    SuiteFixtures.cohort(slow, Duration.ofMillis(1), 200, 1_000);
    assertThat(SuiteFixtures.page(slow).blocks().get(Block.MISSED))
        .contains(
            "| 10×, mutex, 8 threads on one client, at 1 ms added round trip (Lockstep with local"
                + " handoff) | 5.00× | requests 0.40 / 3.00 |"
                + " [single load point](#single-load-point) |");
  }

  @Test
  void theReadShareSection_saysItsOwnRun_putsCuratorBesideLockstep_andJudgesTheGoals() {
    SuiteResults results = new SuiteResults();
    SuiteFixtures.readShare(results);

    String block = SuiteFixtures.page(results).blocks().get(Block.READSHARE);

    assertThat(block)
        .startsWith(
            "Measured 2026-01-07T00:00:00 UTC (1.0 min): `mvn -B -Pbench verify`, from the"
                + " repository root; load average before: 0.50 / 0.40 / 0.30, after: 0.60 / 0.40 /"
                + " 0.30; machine shared: no.")
        .contains(
            "One client, 8 reader threads and 1 writer thread on one path, a lock object each;"
                + " reads in batches of 19 (95 / 5) or 4 (80 / 20), each followed by one write;"
                + " 1 s of warm-up, 2 s measured per row")
        .contains(
            "| 95 / 5 | Curator InterProcessReadWriteLock | 950 | 50 | 1,000 | 1.00× | 19.00 |"
                + " 3.150 | 3.316 | 1.00 / 1.00 | 3.00 / 3.00 |")
        .contains(
            "| 95 / 5 | Lockstep ReadWriteMutex, localHandoff() | 5,700 | 300 | 6,000 | 6.00× |"
                + " 19.00 | 0.400 | 0.421 | 1.00 / 1.00 | 3.00 / 3.00 |")
        .contains(
            "| 80 / 20 | Curator InterProcessReadWriteLock | 400 | 100 | 500 | 1.00× | 4.00 |")
        .contains(
            "**Goals** (issue 37, at 95 / 5, Lockstep ReadWriteMutex, localHandoff()): at least"
                + " 5.00× Curator's acquisitions/s: 6.00×,"
                + " met; fewer than 0.50 requests per read: 0.421, met.");

    SuiteResults slow = new SuiteResults();
    SuiteFixtures.readShare(slow);
    slow.readShareRun =
        new ReadShareScenario.Run(
            "2026-01-07T00:00:00 UTC",
            Duration.ofMinutes(1),
            "3.00 / 0.40 / 0.30",
            "0.60 / 0.40 / 0.30",
            Duration.ofSeconds(1),
            Duration.ofSeconds(2),
            List.of(
                SuiteFixtures.readSharePoint(
                    ReadShareScenario.Series.CURATOR, 19, 1_900, 100, 6_300),
                SuiteFixtures.readSharePoint(
                    ReadShareScenario.Series.SHARING, 19, 3_800, 200, 3_000)));
    assertThat(SuiteFixtures.page(slow).blocks().get(Block.READSHARE))
        .contains("machine shared: **yes**")
        .contains("2.00×, **missed**; fewer than 0.50 requests per read: 0.789, **missed**.");
  }

  @Test
  void theUnreachableSection_saysItsOwnRun_andJudgesEachRowAgainstTheBudgetPlus250Ms() {
    SuiteResults results = new SuiteResults();
    SuiteFixtures.unreachable(results, UnreachableScenario.Fault.CUT, 1, 2, 3);
    SuiteFixtures.unreachable(results, UnreachableScenario.Fault.BLACKHOLE, 201, 262, 300);

    String block = SuiteFixtures.page(results).blocks().get(Block.UNREACHABLE);

    assertThat(block)
        .startsWith(
            "Measured 2026-01-02T00:00:00 UTC (12.0 min): `mvn -B -Pbench verify`, from the"
                + " repository root; 100 trials per Lockstep row after 3 not counted, 3 trials of"
                + " Curator's; load average before: 1.50 / 1.00 / 1.00, after: 2.00 / 1.50 / 1.00;"
                + " machine shared: **yes**.")
        .contains(
            "| `acquire(1 s)` | `ReentrantMutex` | cut | 1 s | 100 | 1 | 2 | 3 |"
                + " `LockUnreachableException` ×100 | yes |")
        .contains(
            "| `acquire(1 s)` | `ReentrantMutex` | silent partition | 1 s | 100 | 201 | 262 | 300 |"
                + " `LockUnreachableException` ×100 | **no**: 12 ms over |")
        .contains(
            "kept at p99 by 1 of Lockstep's 2 rows; broken by `acquire(1 s)` on `ReentrantMutex`"
                + " (silent partition, p99 12 ms over).");
  }

  @Test
  void anUpdate_replacesItsOwnBlockOnly() throws IOException {
    String filled = SuiteFixtures.page(SuiteFixtures.everyGoalMet()).fill(docsPage());
    SuiteResults results = new SuiteResults();
    SuiteFixtures.unreachable(results, UnreachableScenario.Fault.CUT, 7, 8, 9);

    String updated = SuiteFixtures.page(results).fill(filled, EnumSet.of(Block.UNREACHABLE));

    assertThat(blockOf(updated, Block.UNREACHABLE))
        .contains("| cut | 1 s | 100 | 7 | 8 | 9 |")
        .doesNotContain("silent partition");
    assertThat(withoutBlock(updated, Block.UNREACHABLE))
        .isEqualTo(withoutBlock(filled, Block.UNREACHABLE));
  }

  @Test
  void theSemaphoreElectionSection_saysItsOwnRun_andPutsCuratorBesideLockstep() {
    SuiteResults results = new SuiteResults();
    SuiteFixtures.semaphoreElection(results);

    String block = SuiteFixtures.page(results).blocks().get(Block.SEMAPHORE_ELECTION);

    assertThat(block)
        .startsWith(
            "Measured 2026-01-03T00:00:00 UTC (1.0 min): `mvn -B -Pbench verify`, from the"
                + " repository root; load average before: 0.50 / 0.40 / 0.30, after: 0.60 / 0.40 /"
                + " 0.30; machine shared: no.")
        .contains(
            "**Semaphore, uncontended**: one client, one thread, `maxLeases` = 4; requests"
                + " counted over 20 cycles after one not counted; cycles/s over 1 s of warm-up and"
                + " 2 s measured.")
        .contains(
            "| | Curator `InterProcessSemaphoreV2` | Lockstep `CountingSemaphore` | Lockstep ÷"
                + " Curator |")
        .contains("| requests per acquire + return | 7.00 | 3.00 | 0.43× |")
        .contains("| writes per acquire + return | 4.00 | 2.00 | 0.50× |")
        .contains("| response bytes per acquire + return | 700 | 340 | 0.49× |")
        .contains("| cycles/s | 500 | 600 | 1.20× |")
        .contains("| cycle p50 / p99 (ms) | 2.00 / 2.00 | 2.00 / 2.00 | |")
        .contains("| watch events per acquire + return | 1.00 | 1.00 | 1.00× |")
        .contains("**Semaphore under contention**: 4 clients × 4 threads, `maxLeases` = 4")
        .contains("| leases/s | 100 | 200 | 2.00× |")
        .contains("| requests per lease | 9.00 | 4.50 | 0.50× |")
        .contains("| watch events per lease | 2.00 | 0.25 | 0.13× |")
        .contains("**Leader handoffs**: N = 5 participants, a client each; K = 100 handoffs")
        .contains(
            "| | Curator `LeaderLatch` | Lockstep `LeaderElection` (`LEADER_LATCH`) | Lockstep ÷"
                + " Curator |")
        .contains("| handoffs/s | 200 | 250 | 1.25× |")
        .contains("| handoff p50 / p99 (ms) | 3.00 / 3.00 | 3.00 / 3.00 | |")
        .contains("| requests per handoff | 6.00 | 6.00 | 1.00× |")
        .contains("| watch events per handoff | 1.00 | 2.00 | 2.00× |");
  }

  @Test
  void theSemaphoreElectionSection_marksASlowerRate_andShowsAMissingLibraryAsADash() {
    SuiteResults results = new SuiteResults();
    SuiteFixtures.semaphoreElection(results);
    results.elections.removeIf(r -> r.library() == io.lockstep.testing.Library.LOCKSTEP);
    results.elections.add(SuiteFixtures.election(io.lockstep.testing.Library.LOCKSTEP, 100, 1));
    results.semaphore.removeIf(
        p ->
            p.library() == io.lockstep.testing.Library.CURATOR
                && p.load() == SemaphoreScenario.Load.CONTENDED);

    String block = SuiteFixtures.page(results).blocks().get(Block.SEMAPHORE_ELECTION);

    assertThat(block)
        .contains("| handoffs/s | 200 | 100 | 0.50× ✗ |")
        .contains("| leases/s | – | 200 | |");
  }

  @Test
  void anUpdate_ofTheSemaphoreElectionSection_replacesItsOwnBlockOnly() throws IOException {
    String filled = SuiteFixtures.page(SuiteFixtures.everyGoalMet()).fill(docsPage());
    SuiteResults results = new SuiteResults();
    SuiteFixtures.semaphoreElection(results);
    results.elections.clear();
    results.elections.add(SuiteFixtures.election(io.lockstep.testing.Library.CURATOR, 150, 1));

    String updated = SuiteFixtures.page(results).fill(filled, EnumSet.of(Block.SEMAPHORE_ELECTION));

    assertThat(blockOf(updated, Block.SEMAPHORE_ELECTION)).contains("| handoffs/s | 150 | – | |");
    assertThat(withoutBlock(updated, Block.SEMAPHORE_ELECTION))
        .isEqualTo(withoutBlock(filled, Block.SEMAPHORE_ELECTION));
  }

  @Test
  void theDocsPage_saysTheCommandThatFillsTheSemaphoreElectionBlock() throws IOException {
    assertThat(docsPage())
        .contains(
            "`mvn -B -Pbench -pl recipes-test verify -DskipTests -Dbench.args=\"--full --only"
                + " semaphore-election --update\"`");
  }

  static String blockOf(String page, Block block) {
    return page.substring(page.indexOf(block.begin()), page.indexOf(block.end()));
  }

  static String withoutBlock(String page, Block block) {
    return page.replace(blockOf(page, block), "");
  }

  @Test
  void aMissedServiceGoal_isListedWithItsFiguresAndReason() {
    SuiteResults results = new SuiteResults();
    results.watches.add(
        SuiteFixtures.watches(Contender.CURATOR, ContentionScenario.ClientMode.OWN, 1.0, 0, 0));
    results.watches.add(
        SuiteFixtures.watches(Contender.LOCKSTEP, ContentionScenario.ClientMode.OWN, 1.0, 1.5, 0));
    SuiteFixtures.recording(results, 1_000, 800, 1_000, 810);

    var blocks = SuiteFixtures.page(results).blocks();

    assertThat(blocks.get(Block.MISSED))
        .contains(
            "| watch events per acquisition | 2.50 | deleted 1.00 / 1.00, child 1.50 / 0.00,"
                + " changed 0.00 / 0.00 | [child watches](#child-watches) |")
        .contains(
            "| Flight Recording, mutex | 0.80× | with ÷ without a recording 0.80× / 0.81× |"
                + " [recording overhead](#recording-overhead) |");
  }

  @Test
  void theWaitersJvmsLine_isParsedIntoItsFigures() {
    Map<String, String> values =
        WaitersScenario.parse(
            List.of("noise", WaitersProcess.PREFIX + " queueNanos=5 drainNanos=7 inOrder=true"));

    assertThat(values)
        .containsEntry("queueNanos", "5")
        .containsEntry("drainNanos", "7")
        .containsEntry("inOrder", "true");
    assertThatThrownBy(() -> WaitersScenario.parse(List.of("no result")))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aMissedGoal_isListedWithItsFiguresAndALinkToItsReason() {
    SuiteResults results = new SuiteResults();
    SuiteResults.Row mutex = new SuiteResults.Row(io.lockstep.testing.Recipe.MUTEX, 1);
    results.cost(mutex, io.lockstep.testing.Library.CURATOR, SuiteFixtures.cost(3, 2, 321));
    results.cost(mutex, io.lockstep.testing.Library.LOCKSTEP, SuiteFixtures.cost(3, 2, 253));
    results.score(mutex, io.lockstep.testing.Library.CURATOR, new SuiteResults.Score(1_000, 200));
    results.score(mutex, io.lockstep.testing.Library.LOCKSTEP, new SuiteResults.Score(900, 200));

    var blocks = SuiteFixtures.page(results).blocks();

    assertThat(blocks.get(Block.GOALS))
        .contains("missed on uncontended mutex (0.90×) | **missed** |");
    assertThat(blocks.get(Block.MISSED))
        .contains(
            "| uncontended mutex | 0.90× | requests 3.00 / 3.00, writes 2.00 / 2.00, response bytes"
                + " 253 / 321, JMH error ± 200 / 200 | [within error](#within-error) |");
    assertThat(blocks.get(Block.UNCONTENDED)).contains("| 0.90× ✗ |");
  }

  @Test
  void aTemplateWithoutABlock_isRefused_andTheBareTemplateHasThemAll() {
    BenchmarkPage run = SuiteFixtures.page(new SuiteResults());

    assertThatThrownBy(() -> run.fill("# no markers\n"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(Block.RUN.begin());
    assertThat(run.fill(BenchmarkPage.bareTemplate())).contains("| Cycles counted per row | 20 |");
  }

  @Test
  void markdownTables_alignFiguresRight_andCountTheirCells() {
    MarkdownTable table = new MarkdownTable("a", "b", "");
    table.alignRight(1);
    table.row("x", "1", "");

    assertThat(table.render()).isEqualTo("| a | b | |\n|---|---:|---|\n| x | 1 | |\n");
    assertThatThrownBy(() -> table.row("only one")).isInstanceOf(IllegalArgumentException.class);
  }
}

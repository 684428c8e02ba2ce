package io.lockstep.bench;

import static io.lockstep.bench.Figures.number;

import io.lockstep.testing.Library;
import java.time.Duration;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The block of the semaphore-election section ({@link SemaphoreScenario}, {@link
 * ElectionScenario}): a line saying when and how it ran (the block can be updated without the rest
 * of the page, so it says its own run), then three tables of Curator's figure, Lockstep's and the
 * ratio: the uncontended semaphore, the semaphore under contention, and leader handoffs.
 */
final class SemaphoreElectionTables {
  /**
   * When the section ran and with what, for the lines of its block (which may be updated alone).
   *
   * @param started the start, as the page writes dates
   * @param took how long the section took
   * @param loadBefore the load average before it
   * @param loadAfter the load average after it
   * @param maxLeases both semaphores' {@code maxLeases}
   * @param countedCycles the uncontended cycles counted
   * @param clients C, the clients of the contention rows
   * @param threadsPerClient T, the threads of each
   * @param warmup the warm-up of each timed semaphore point
   * @param measured the measured period of each timed semaphore point
   * @param participants N, the election's participants
   * @param warmUpHandoffs the handoffs not counted
   * @param handoffs K, the handoffs counted
   */
  record Run(
      String started,
      Duration took,
      String loadBefore,
      String loadAfter,
      int maxLeases,
      int countedCycles,
      int clients,
      int threadsPerClient,
      Duration warmup,
      Duration measured,
      int participants,
      int warmUpHandoffs,
      int handoffs) {}

  private final SuiteResults results;

  SemaphoreElectionTables(SuiteResults results) {
    this.results = results;
  }

  /**
   * The block, or "" if the section did not run.
   *
   * @param command the command of the run, to print
   * @param cores the cores available to the JVM, to judge whether the machine was shared
   */
  String block(String command, int cores) {
    Run run = results.semaphoreElectionRun;
    if (run == null) {
      return "";
    }
    StringBuilder block = new StringBuilder();
    block.append(
        BenchmarkPage.measuredLine(
            run.started(), run.took(), command, run.loadBefore(), run.loadAfter(), cores));
    block
        .append(
            String.format(
                Locale.ROOT,
                "**Semaphore, uncontended**: one client, one thread, `maxLeases` = %d; requests"
                    + " counted over %d cycles after one not counted; cycles/s over %s of warm-up"
                    + " and %s measured.%n%n",
                run.maxLeases(),
                run.countedCycles(),
                Figures.seconds(run.warmup()),
                Figures.seconds(run.measured())))
        .append(uncontended())
        .append('\n');
    block
        .append(
            String.format(
                Locale.ROOT,
                "**Semaphore under contention**: %d clients × %d threads, `maxLeases` = %d, a"
                    + " semaphore object per thread; %s of warm-up, %s measured.%n%n",
                run.clients(),
                run.threadsPerClient(),
                run.maxLeases(),
                Figures.seconds(run.warmup()),
                Figures.seconds(run.measured())))
        .append(contended())
        .append('\n');
    block
        .append(
            String.format(
                Locale.ROOT,
                "**Leader handoffs**: N = %d participants, a client each; K = %d handoffs counted"
                    + " after %d not counted.%n%n",
                run.participants(),
                run.handoffs(),
                run.warmUpHandoffs()))
        .append(election());
    return block.toString();
  }

  private static MarkdownTable table(String curator, String lockstep) {
    MarkdownTable table =
        new MarkdownTable("", "Curator " + curator, "Lockstep " + lockstep, "Lockstep ÷ Curator");
    table.alignRight(1, 2, 3);
    return table;
  }

  private String uncontended() {
    MarkdownTable table =
        table(
            SemaphoreScenario.className(Library.CURATOR),
            SemaphoreScenario.className(Library.LOCKSTEP));
    CycleCost curator = results.semaphoreCosts.get(Library.CURATOR);
    CycleCost lockstep = results.semaphoreCosts.get(Library.LOCKSTEP);
    cost(
        table,
        "requests per acquire + return",
        curator,
        lockstep,
        CycleCost::requestsPerCycle,
        true);
    cost(table, "writes per acquire + return", curator, lockstep, CycleCost::writesPerCycle, true);
    cost(
        table,
        "response bytes per acquire + return",
        curator,
        lockstep,
        CycleCost::responseBytesPerCycle,
        false);
    SemaphoreScenario.Point curatorRate =
        results.semaphore(Library.CURATOR, SemaphoreScenario.Load.UNCONTENDED);
    SemaphoreScenario.Point lockstepRate =
        results.semaphore(Library.LOCKSTEP, SemaphoreScenario.Load.UNCONTENDED);
    rate(table, "cycles/s", curatorRate, lockstepRate);
    latency(table, "cycle p50 / p99 (ms)", curatorRate, lockstepRate);
    table.row(
        "watch events per acquire + return",
        decimals(curatorRate, SemaphoreScenario.Point::watchesPerLease),
        decimals(lockstepRate, SemaphoreScenario.Point::watchesPerLease),
        ratio(curatorRate, lockstepRate, SemaphoreScenario.Point::watchesPerLease));
    return table.render();
  }

  private String contended() {
    MarkdownTable table =
        table(
            SemaphoreScenario.className(Library.CURATOR),
            SemaphoreScenario.className(Library.LOCKSTEP));
    SemaphoreScenario.Point curator =
        results.semaphore(Library.CURATOR, SemaphoreScenario.Load.CONTENDED);
    SemaphoreScenario.Point lockstep =
        results.semaphore(Library.LOCKSTEP, SemaphoreScenario.Load.CONTENDED);
    rate(table, "leases/s", curator, lockstep);
    table.row(
        "requests per lease",
        decimals(curator, p -> p.result().requestsPerAcquisition()),
        decimals(lockstep, p -> p.result().requestsPerAcquisition()),
        ratio(curator, lockstep, p -> p.result().requestsPerAcquisition()));
    table.row(
        "watch events per lease",
        decimals(curator, SemaphoreScenario.Point::watchesPerLease),
        decimals(lockstep, SemaphoreScenario.Point::watchesPerLease),
        ratio(curator, lockstep, SemaphoreScenario.Point::watchesPerLease));
    latency(table, "acquire p50 / p99 (ms)", curator, lockstep);
    return table.render();
  }

  private String election() {
    MarkdownTable table =
        table(
            ElectionScenario.className(Library.CURATOR),
            ElectionScenario.className(Library.LOCKSTEP));
    ElectionScenario.Result curator = results.election(Library.CURATOR);
    ElectionScenario.Result lockstep = results.election(Library.LOCKSTEP);
    table.row(
        "handoffs/s",
        figure(curator, ElectionScenario.Result::handoffsPerSecond, false),
        figure(lockstep, ElectionScenario.Result::handoffsPerSecond, false),
        curator == null || lockstep == null
            ? ""
            : Figures.mark(lockstep.handoffsPerSecond() / curator.handoffsPerSecond()));
    table.row(
        "handoff p50 / p99 (ms)",
        curator == null ? "–" : number(curator.millis(50)) + " / " + number(curator.millis(99)),
        lockstep == null ? "–" : number(lockstep.millis(50)) + " / " + number(lockstep.millis(99)),
        "");
    table.row(
        "requests per handoff",
        figure(curator, ElectionScenario.Result::requestsPerHandoff, true),
        figure(lockstep, ElectionScenario.Result::requestsPerHandoff, true),
        ratio(curator, lockstep, ElectionScenario.Result::requestsPerHandoff));
    table.row(
        "writes per handoff",
        figure(curator, ElectionScenario.Result::writesPerHandoff, true),
        figure(lockstep, ElectionScenario.Result::writesPerHandoff, true),
        ratio(curator, lockstep, ElectionScenario.Result::writesPerHandoff));
    table.row(
        "watch events per handoff",
        figure(curator, ElectionScenario.Result::watchesPerHandoff, true),
        figure(lockstep, ElectionScenario.Result::watchesPerHandoff, true),
        ratio(curator, lockstep, ElectionScenario.Result::watchesPerHandoff));
    return table.render();
  }

  private static void cost(
      MarkdownTable table,
      String label,
      CycleCost curator,
      CycleCost lockstep,
      ToDoubleFunction<CycleCost> figure,
      boolean decimals) {
    table.row(
        label,
        figure(curator, figure, decimals),
        figure(lockstep, figure, decimals),
        ratio(curator, lockstep, figure));
  }

  private static void rate(
      MarkdownTable table,
      String label,
      SemaphoreScenario.Point curator,
      SemaphoreScenario.Point lockstep) {
    table.row(
        label,
        curator == null ? "–" : number(curator.result().perSecond()),
        lockstep == null ? "–" : number(lockstep.result().perSecond()),
        curator == null || lockstep == null
            ? ""
            : Figures.mark(lockstep.result().perSecond() / curator.result().perSecond()));
  }

  private static void latency(
      MarkdownTable table,
      String label,
      SemaphoreScenario.Point curator,
      SemaphoreScenario.Point lockstep) {
    table.row(label, percentiles(curator), percentiles(lockstep), "");
  }

  private static String percentiles(SemaphoreScenario.Point point) {
    return point == null
        ? "–"
        : number(point.result().millis(50)) + " / " + number(point.result().millis(99));
  }

  private static <T> String figure(T value, ToDoubleFunction<T> figure, boolean decimals) {
    if (value == null) {
      return "–";
    }
    return decimals
        ? Figures.decimals(figure.applyAsDouble(value))
        : number(figure.applyAsDouble(value));
  }

  private static <T> String decimals(T value, ToDoubleFunction<T> figure) {
    return figure(value, figure, true);
  }

  /** Lockstep's figure over Curator's: "0.43×"; empty if either is missing or Curator's is 0. */
  private static <T> String ratio(T curator, T lockstep, ToDoubleFunction<T> figure) {
    if (curator == null || lockstep == null || figure.applyAsDouble(curator) == 0) {
      return "";
    }
    return Figures.ratio(figure.applyAsDouble(lockstep) / figure.applyAsDouble(curator));
  }
}

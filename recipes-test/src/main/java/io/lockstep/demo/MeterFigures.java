package io.lockstep.demo;

import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.micrometer.LockstepMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;

/**
 * The run as Micrometer sees it: a {@link LockstepMetrics} for the client of every instance, all
 * bound to one {@link SimpleMeterRegistry}, as a service would bind one to its own registry. They
 * add no tag, so the instances' timers and counters are one meter per recipe (and outcome); the
 * gauges of the instances share one name and tags too, so only the first instance's would count,
 * and the demo does not read them.
 *
 * <p>A {@link MeterFilter} turns on the percentiles of the {@code lockstep.} timers (off by default
 * in Micrometer) and keeps them and the maximum over the whole run rather than the last two
 * minutes.
 */
final class MeterFigures implements AutoCloseable {
  private static final double[] PERCENTILES = {0.5, 0.95, 0.99};

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final List<LockstepMetrics> binders = new ArrayList<>();

  MeterFigures() {
    registry
        .config()
        .meterFilter(
            new MeterFilter() {
              @Override
              public DistributionStatisticConfig configure(
                  Meter.Id id, DistributionStatisticConfig config) {
                if (!id.getName().startsWith("lockstep.")) {
                  return config;
                }
                return DistributionStatisticConfig.builder()
                    .percentiles(PERCENTILES)
                    .percentilePrecision(2)
                    .expiry(Duration.ofDays(1))
                    .bufferLength(1)
                    .build()
                    .merge(config);
              }
            });
  }

  /** Measures every lock made with {@code client} from now on. */
  void observe(CuratorFramework client) {
    LockstepMetrics metrics = new LockstepMetrics(client);
    metrics.bindTo(registry);
    binders.add(metrics);
  }

  /** What the meters say now. */
  Snapshot snapshot() {
    TreeMap<String, AcquireRow> rows = new TreeMap<>();
    for (Timer timer : registry.find(LockstepMetrics.ACQUIRE).timers()) {
      String recipe = timer.getId().getTag("recipe");
      String outcome = timer.getId().getTag("outcome");
      AcquireRow row = rows.computeIfAbsent(recipe, AcquireRow::new);
      HistogramSnapshot histogram = timer.takeSnapshot();
      if (AcquireOutcome.GRANTED.name().equals(outcome)) {
        row.granted = histogram.count();
        for (ValueAtPercentile value : histogram.percentileValues()) {
          row.percentileMicros.add(micros(value.value(TimeUnit.NANOSECONDS)));
        }
        row.maxMicros = micros(histogram.max(TimeUnit.NANOSECONDS));
      } else if (AcquireOutcome.TIMED_OUT.name().equals(outcome)) {
        row.timedOut += histogram.count();
      } else if (AcquireOutcome.WITHDRAWN.name().equals(outcome)) {
        row.withdrawn += histogram.count();
      } else {
        row.failed += histogram.count();
      }
    }
    long holds = 0;
    double heldNanos = 0;
    for (Timer timer : registry.find(LockstepMetrics.HELD).timers()) {
      holds += timer.count();
      heldNanos += timer.totalTime(TimeUnit.NANOSECONDS);
    }
    return new Snapshot(
        List.copyOf(rows.values()),
        count(LockstepMetrics.LOST),
        count(LockstepMetrics.AT_RISK),
        holds,
        holds == 0 ? 0 : micros(heldNanos / holds));
  }

  private long count(String counter) {
    return (long) registry.find(counter).counters().stream().mapToDouble(Counter::count).sum();
  }

  private static long micros(double nanos) {
    return Math.round(nanos / 1_000);
  }

  @Override
  public void close() {
    binders.forEach(LockstepMetrics::close);
    registry.close();
  }

  /** The attempts of one recipe: {@code lockstep.lock.acquire}, by outcome. */
  static final class AcquireRow {
    final String recipe;
    long granted;
    final List<Long> percentileMicros = new ArrayList<>(); // of PERCENTILES, granted ones
    long maxMicros;
    long timedOut;
    long withdrawn;
    long failed;

    AcquireRow(String recipe) {
      this.recipe = recipe;
    }
  }

  /**
   * The figures of a run.
   *
   * @param acquires per recipe, by name
   * @param lost {@code lockstep.lock.lost}: holds lost
   * @param atRisk {@code lockstep.lock.at.risk}: holds put at risk
   * @param holds {@code lockstep.lock.held}: holds released
   * @param meanHeldMicros their mean time held
   */
  record Snapshot(
      List<AcquireRow> acquires, long lost, long atRisk, long holds, long meanHeldMicros) {
    Snapshot {
      acquires = List.copyOf(acquires);
    }

    /** All attempts granted, every recipe. */
    long granted() {
      return acquires.stream().mapToLong(row -> row.granted).sum();
    }

    /** The figures, as printed at the end of a run. */
    List<String> lines(String indent) {
      List<String> header = new ArrayList<>(List.of(LockstepMetrics.ACQUIRE, "granted"));
      for (double percentile : PERCENTILES) {
        header.add(String.format(Locale.ROOT, "p%.0f wait", percentile * 100));
      }
      header.addAll(List.of("max wait", "timed out", "withdrawn", "failed"));
      int[] right = new int[header.size() - 1];
      for (int i = 0; i < right.length; i++) {
        right[i] = i + 1;
      }
      Table table = new Table(header, right);
      for (AcquireRow row : acquires) {
        List<String> cells = new ArrayList<>(List.of("  " + row.recipe, count(row.granted)));
        for (int i = 0; i < PERCENTILES.length; i++) {
          cells.add(
              i < row.percentileMicros.size() ? Report.latency(row.percentileMicros.get(i)) : "");
        }
        cells.addAll(
            List.of(
                Report.latency(row.maxMicros),
                count(row.timedOut),
                count(row.withdrawn),
                count(row.failed)));
        table.row(cells.toArray(String[]::new));
      }
      List<String> lines = new ArrayList<>(table.lines(indent));
      lines.add(
          String.format(
              "%s%-24s %s released, held %s on average",
              indent, LockstepMetrics.HELD, holds(holds), Report.latency(meanHeldMicros)));
      lines.add(String.format("%s%-24s %s lost", indent, LockstepMetrics.LOST, holds(lost)));
      lines.add(
          String.format("%s%-24s %s put at risk", indent, LockstepMetrics.AT_RISK, holds(atRisk)));
      return lines;
    }

    private static String count(long count) {
      return String.format(Locale.ROOT, "%,d", count);
    }

    private static String holds(long count) {
      return count(count) + (count == 1 ? " hold" : " holds");
    }
  }
}

package io.lockstep.bench;

import io.lockstep.bench.ContentionScenario.ClientMode;
import io.lockstep.testing.Library;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** The PNG charts of the benchmark page, written next to it. */
final class BenchmarkCharts {
  private static final Color CURATOR = new Color(0xD9, 0x5F, 0x02);
  private static final Color LOCKSTEP = new Color(0x1B, 0x9E, 0x77);
  private static final List<Color> PALETTE =
      List.of(
          CURATOR,
          LOCKSTEP,
          new Color(0x75, 0x70, 0xB3),
          new Color(0xE7, 0x29, 0x8A),
          new Color(0x66, 0xA6, 0x1E));
  private static final int WIDTH = 640;
  private static final int HEIGHT = 420;

  private BenchmarkCharts() {}

  static void write(SuiteResults results, Path directory) throws IOException {
    if (!results.scores.isEmpty()) {
      save(List.of(uncontended(results)), 1, 1, directory.resolve("bench-uncontended.png"));
    }
    if (!results.handoffs.isEmpty()) {
      save(handoff(results), 1, 3, directory.resolve("bench-handoff.png"));
    }
    if (!results.contention.isEmpty()) {
      List<Chart<?, ?>> charts = new ArrayList<>();
      for (ClientMode mode : ClientMode.values()) {
        if (results.contention.containsKey(mode)) {
          charts.add(contentionRate(mode, results));
          charts.add(contentionLatency(mode, results));
        }
      }
      save(charts, charts.size() / 2, 2, directory.resolve("bench-contention.png"));
    }
  }

  private static void save(List<? extends Chart<?, ?>> charts, int rows, int columns, Path file)
      throws IOException {
    String name = file.toString();
    String withoutSuffix = name.substring(0, name.length() - ".png".length());
    if (charts.size() == 1) {
      BitmapEncoder.saveBitmap(charts.get(0), withoutSuffix, BitmapFormat.PNG);
    } else {
      BitmapEncoder.saveBitmap(charts, rows, columns, withoutSuffix, BitmapFormat.PNG);
    }
  }

  private static CategoryChart uncontended(SuiteResults results) {
    CategoryChart chart =
        new CategoryChartBuilder()
            .width(WIDTH * 2)
            .height(HEIGHT)
            .title("Uncontended acquire + release (higher is better)")
            .xAxisTitle("recipe")
            .yAxisTitle("cycles per second")
            .build();
    style(chart.getStyler());
    chart.getStyler().setXAxisLabelRotation(15);
    for (Library library : Library.values()) {
      List<String> labels = new ArrayList<>();
      List<Double> values = new ArrayList<>();
      for (SuiteResults.Row row : SuiteResults.UNCONTENDED_ROWS) {
        var scores = results.scores.get(row);
        if (scores != null && scores.containsKey(library)) {
          labels.add(row.label());
          values.add(scores.get(library).perSecond());
        }
      }
      chart.addSeries(library.label(), labels, values).setFillColor(color(library));
    }
    return chart;
  }

  private static List<XYChart> handoff(SuiteResults results) {
    XYChart drain =
        xyChart(
            "Time to drain a queue of N waiters (lower is better)", "N (waiters)", "drain (ms)");
    XYChart perHandoff =
        xyChart("Time per handoff (lower is better)", "N (waiters)", "drain / N (µs)");
    XYChart bytes =
        xyChart("Response bytes per handoff (lower is better)", "N (waiters)", "bytes per handoff");
    List<Integer> lengths = results.queueLengths();
    for (Library library : Library.values()) {
      List<Double> xs = new ArrayList<>();
      List<Double> drains = new ArrayList<>();
      List<Double> times = new ArrayList<>();
      List<Double> sizes = new ArrayList<>();
      for (int n : lengths) {
        HandoffScenario.Result result = results.handoff(library, n);
        if (result != null) {
          xs.add((double) n);
          drains.add(result.drainMillis());
          times.add(result.handoffMicros());
          sizes.add(result.responseBytesPerHandoff());
        }
      }
      line(drain, library.label(), xs, drains, color(library), false);
      line(perHandoff, library.label(), xs, times, color(library), false);
      line(bytes, library.label(), xs, sizes, color(library), false);
    }
    return List.of(drain, perHandoff, bytes);
  }

  private static XYChart contentionRate(ClientMode mode, SuiteResults results) {
    XYChart chart =
        xyChart(
            "Acquisitions per second, " + mode.label() + " (higher is better)",
            "threads",
            "acquisitions per second");
    chart.getStyler().setXAxisLogarithmic(true);
    double lowest = Double.MAX_VALUE;
    double highest = 0;
    for (Contender contender : Contender.in(mode)) {
      List<LoadResult> points = results.contention(mode, contender);
      series(chart, contender.label(), points, color(contender), LoadResult::perSecond, false);
      for (LoadResult point : points) {
        lowest = Math.min(lowest, point.perSecond());
        highest = Math.max(highest, point.perSecond());
      }
    }
    // Local handoff runs an order of magnitude above the rest: a linear axis would flatten them.
    chart.getStyler().setYAxisLogarithmic(highest > 10 * lowest);
    return chart;
  }

  private static XYChart contentionLatency(ClientMode mode, SuiteResults results) {
    XYChart chart =
        xyChart(
            "Acquire latency, " + mode.label() + " (lower is better)", "threads", "latency (ms)");
    chart.getStyler().setXAxisLogarithmic(true);
    chart.getStyler().setYAxisLogarithmic(true);
    for (Contender contender : Contender.in(mode)) {
      List<LoadResult> points = results.contention(mode, contender);
      Color color = color(contender);
      series(chart, contender.label() + " p50", points, color, p -> p.millis(50), false);
      series(chart, contender.label() + " p99", points, color, p -> p.millis(99), true);
    }
    return chart;
  }

  private static void series(
      XYChart chart,
      String name,
      List<LoadResult> points,
      Color color,
      ToDoubleFunction<LoadResult> value,
      boolean dashed) {
    List<Double> xs = new ArrayList<>();
    List<Double> ys = new ArrayList<>();
    points.stream()
        .sorted(Comparator.comparingInt(LoadResult::threads))
        .forEach(
            p -> {
              xs.add((double) p.threads());
              ys.add(Math.max(1e-3, value.applyAsDouble(p)));
            });
    line(chart, name, xs, ys, color, dashed);
  }

  private static void line(
      XYChart chart, String name, List<Double> xs, List<Double> ys, Color color, boolean dashed) {
    if (xs.isEmpty()) {
      return;
    }
    XYSeries series = chart.addSeries(name, xs, ys);
    series.setLineColor(color);
    series.setMarkerColor(color);
    series.setMarker(dashed ? SeriesMarkers.DIAMOND : SeriesMarkers.CIRCLE);
    if (dashed) {
      series.setLineStyle(
          new BasicStroke(
              2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f));
    }
  }

  private static XYChart xyChart(String title, String xTitle, String yTitle) {
    XYChart chart =
        new XYChartBuilder()
            .width(WIDTH)
            .height(HEIGHT)
            .title(title)
            .xAxisTitle(xTitle)
            .yAxisTitle(yTitle)
            .build();
    style(chart.getStyler());
    return chart;
  }

  private static void style(Styler styler) {
    styler.setChartBackgroundColor(Color.WHITE);
    styler.setPlotBackgroundColor(Color.WHITE);
    styler.setLegendPosition(Styler.LegendPosition.OutsideS);
    styler.setLegendLayout(Styler.LegendLayout.Horizontal);
    styler.setChartTitleBoxVisible(false);
  }

  private static Color color(Library library) {
    return library == Library.CURATOR ? CURATOR : LOCKSTEP;
  }

  /** Curator's and Lockstep's colours for the first two series, then the rest of the palette. */
  private static Color color(Contender contender) {
    return PALETTE.get(contender.ordinal() % PALETTE.size());
  }
}

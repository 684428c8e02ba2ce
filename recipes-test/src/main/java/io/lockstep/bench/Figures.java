package io.lockstep.bench;

import java.time.Duration;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/** How the benchmark page writes its numbers: the same figure always reads the same way. */
final class Figures {
  private Figures() {}

  /** A figure with about three significant digits; "–" for a missing one (NaN). */
  static String number(double value) {
    if (Double.isNaN(value)) {
      return "–";
    }
    double magnitude = Math.abs(value);
    if (magnitude >= 100 || value == Math.rint(value)) {
      return String.format(Locale.ROOT, "%,.0f", value);
    }
    if (magnitude >= 10) {
      return String.format(Locale.ROOT, "%.1f", value);
    }
    return String.format(Locale.ROOT, "%.2f", value);
  }

  /** A ratio: "1.84×". */
  static String ratio(double ratio) {
    return String.format(Locale.ROOT, "%.2f×", ratio);
  }

  /** A throughput ratio, marked when below Curator's: "0.91× ✗". */
  static String mark(double ratio) {
    return ratio(ratio) + (ratio >= 1.0 ? "" : " ✗");
  }

  /** An average per operation, with two decimals; "–" for a missing one (NaN). */
  static String decimals(double value) {
    return Double.isNaN(value) ? "–" : String.format(Locale.ROOT, "%.2f", value);
  }

  /** A JMH score with its error: "1,022 ± 231", or the score alone if JMH gave none. */
  static String rate(SuiteResults.Score score) {
    return Double.isNaN(score.error())
        ? number(score.perSecond())
        : number(score.perSecond()) + " ± " + number(score.error());
  }

  /** The p50 / p99 / p999 of a latency histogram in nanoseconds, in milliseconds. */
  static String percentiles(Histogram latency) {
    return number(LoadResult.millis(latency, 50))
        + " / "
        + number(LoadResult.millis(latency, 99))
        + " / "
        + number(LoadResult.millis(latency, 99.9));
  }

  /** "10 s". */
  static String seconds(Duration duration) {
    return duration.toSeconds() + " s";
  }

  /** "11.6 min". */
  static String minutes(Duration duration) {
    return String.format(Locale.ROOT, "%.1f min", duration.toSeconds() / 60.0);
  }

  /** "23.5 GiB". */
  static String gibibytes(double gib) {
    return String.format(Locale.ROOT, "%.1f GiB", gib);
  }

  /** The text with its first letter in upper case. */
  static String capitalised(String text) {
    return text.isEmpty() ? text : Character.toUpperCase(text.charAt(0)) + text.substring(1);
  }
}

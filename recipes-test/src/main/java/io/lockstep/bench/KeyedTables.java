package io.lockstep.bench;

import static io.lockstep.bench.Figures.number;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The block of the keyed section ({@link KeyedScenario}): a line saying when and how it ran (the
 * block can be updated without the rest of the page), then a table per load with a column per
 * variant: Curator's mutex per key as Spring's registry makes it, and {@code KeyedLocks} flat and
 * hashed.
 */
final class KeyedTables {
  /**
   * When the section ran and with what.
   *
   * @param started the start, as the page writes dates
   * @param took how long the section took
   * @param loadBefore the load average before it
   * @param loadAfter the load average after it
   * @param keys the keys of the one-client run
   * @param contendedKeys the keys of the contended run
   * @param results the figures, by variant and load
   */
  record Run(
      String started,
      Duration took,
      String loadBefore,
      String loadAfter,
      int keys,
      int contendedKeys,
      List<KeyedScenario.Result> results) {}

  private final Run run;

  KeyedTables(SuiteResults results) {
    this.run = results.keyedRun;
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
        String.format(
            Locale.ROOT,
            "Measured %s (%s): `%s`, from the repository root; load average before: %s, after:"
                + " %s; machine shared: %s. Each variant against a server of its own:"
                + " `znode.container.checkIntervalMs` = %,d, `znode.container.maxPerMinute` = %,d"
                + " (the default), `znode.container.maxNeverUsedIntervalMs` = 0 (the default).%n%n",
            run.started(),
            Figures.minutes(run.took()),
            command,
            run.loadBefore(),
            run.loadAfter(),
            BenchmarkPage.shared(run.loadBefore(), cores) ? "**yes**" : "no",
            KeyedScenario.CHECK_INTERVAL_MS,
            KeyedScenario.MAX_PER_MINUTE));
    block
        .append(
            String.format(
                Locale.ROOT,
                "**One client**, %,d distinct keys, each locked and released once, %d threads.%n%n",
                run.keys(),
                KeyedScenario.THREADS))
        .append(table(1, true))
        .append('\n');
    block
        .append(
            String.format(
                Locale.ROOT,
                "**%d clients**, %,d keys, each locked and released once by every client, the"
                    + " clients walking the keys in the same order, %d threads each.%n%n",
                KeyedScenario.CLIENTS,
                run.contendedKeys(),
                KeyedScenario.THREADS_PER_CLIENT))
        .append(table(KeyedScenario.CLIENTS, false));
    return block.toString();
  }

  private String table(int clients, boolean heap) {
    KeyedScenario.Variant[] variants = KeyedScenario.Variant.values();
    String[] header = new String[variants.length + 1];
    header[0] = "";
    for (int i = 0; i < variants.length; i++) {
      header[i + 1] = variants[i].label();
    }
    MarkdownTable table = new MarkdownTable(header);
    table.alignRight(1, 2, 3);
    row(table, clients, "acquisitions/s", r -> number(r.perSecond()));
    if (heap) {
      row(table, clients, "retained heap per idle key (bytes)", r -> number(r.heapBytesPerKey()));
    }
    row(table, clients, "largest directory (children)", r -> number(r.largestDirectory()));
    row(
        table,
        clients,
        String.format(
            Locale.ROOT,
            "directories left %d s after the last release",
            KeyedScenario.REAPER_WAIT_MS / 1000),
        r -> number(r.directoriesLeft()));
    return table.render();
  }

  private void row(
      MarkdownTable table,
      int clients,
      String label,
      Function<KeyedScenario.Result, String> figure) {
    KeyedScenario.Variant[] variants = KeyedScenario.Variant.values();
    String[] cells = new String[variants.length + 1];
    cells[0] = label;
    for (int i = 0; i < variants.length; i++) {
      KeyedScenario.Variant variant = variants[i];
      cells[i + 1] =
          run.results().stream()
              .filter(r -> r.variant() == variant && r.clients() == clients)
              .findFirst()
              .map(figure)
              .orElse("–");
    }
    table.row(cells);
  }
}

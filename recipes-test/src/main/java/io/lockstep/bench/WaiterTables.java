package io.lockstep.bench;

import static io.lockstep.bench.Figures.decimals;
import static io.lockstep.bench.Figures.number;

import io.lockstep.bench.ContentionScenario.ClientMode;
import io.lockstep.testing.Library;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The tables of the sections about waiting: many waiters on one client, and the watch events each
 * acquisition costs. Each method returns "" when the run did not measure the section.
 */
final class WaiterTables {
  private final SuiteSettings settings;
  private final SuiteResults results;

  WaiterTables(SuiteSettings settings, SuiteResults results) {
    this.settings = settings;
    this.results = results;
  }

  String waiters() {
    MarkdownTable table =
        new MarkdownTable(
            "N",
            "waiters",
            "time to queue (ms)",
            "time to drain (ms)",
            "drain per waiter (µs)",
            "heap per waiter (bytes)",
            "threads per waiter",
            "most live threads",
            "requests per waiter (drain)",
            "response bytes per waiter (drain)",
            "granted in queue order");
    table.alignRight(0, 2, 3, 4, 5, 6, 7, 8, 9);
    for (int n : settings.waiterCounts()) {
      for (Library library : List.of(Library.CURATOR, Library.LOCKSTEP)) {
        WaitersScenario.Result result = results.waiters(library, n);
        String who =
            library == Library.CURATOR
                ? "Curator: `InterProcessMutex.acquire()`, a thread each"
                : "Lockstep: `acquireAsync()`, no thread";
        if (result == null) {
          if (library == Library.CURATOR && results.waiters(Library.LOCKSTEP, n) != null) {
            table.row(cells(n, who, "not run: above `--curator-waiters`"));
          }
          continue;
        }
        if (!result.finished()) {
          table.row(
              cells(
                  n,
                  who,
                  "stopped: not done within " + Figures.minutes(settings.waitersTimeout())));
          continue;
        }
        Boolean inOrder = result.inOrder();
        table.row(
            number(n),
            who,
            number(result.queueMillis()),
            number(result.drainMillis()),
            number(result.drainMillis() * 1e3 / n),
            number(result.heapPerWaiter()),
            String.format(Locale.ROOT, "%.3f", result.threadsPerWaiter()),
            number(result.peakThreads()),
            decimals(result.requestsPerWaiter()),
            number(result.responseBytesPerWaiter()),
            inOrder == null ? "–" : inOrder ? "yes" : "**no**");
      }
    }
    return table.isEmpty() ? "" : table.render();
  }

  /** A row that says why a point has no figures. */
  private static String[] cells(int n, String who, String why) {
    List<String> cells = new ArrayList<>(List.of(number(n), who, why));
    while (cells.size() < 11) {
      cells.add("");
    }
    return cells.toArray(String[]::new);
  }

  String watches() {
    // a column per series the run measured (local handoff only runs with a shared client)
    List<Contender> measured =
        Arrays.stream(Contender.values())
            .filter(
                c ->
                    Arrays.stream(ClientMode.values()).anyMatch(m -> results.watches(m, c) != null))
            .toList();
    List<String> header = new ArrayList<>(List.of("threads"));
    for (Contender contender : measured) {
      header.add(contender.label() + " watch events per acquisition (deleted / child / changed)");
    }
    header.add(
        "requests per acquisition, "
            + measured.stream().map(Contender::label).collect(Collectors.joining(" / ")));
    MarkdownTable table = new MarkdownTable(header.toArray(String[]::new));
    for (int i = 1; i < header.size(); i++) {
      table.alignRight(i);
    }
    for (ClientMode mode : List.of(ClientMode.OWN, ClientMode.SHARED)) {
      List<WatchScenario.Result> row = new ArrayList<>();
      for (Contender contender : measured) {
        row.add(results.watches(mode, contender));
      }
      if (row.stream().allMatch(r -> r == null)) {
        continue;
      }
      WatchScenario.Result any = row.stream().filter(r -> r != null).findFirst().orElseThrow();
      List<String> cells = new ArrayList<>();
      cells.add(
          any.threads()
              + (mode == ClientMode.OWN ? ", a client each" : ", one shared client")
              + ", "
              + number(any.acquisitions())
              + " acquisitions");
      for (WatchScenario.Result result : row) {
        cells.add(
            result == null
                ? "–"
                : String.format(
                    Locale.ROOT,
                    "%s (%s / %s / %s)",
                    decimals(result.watchesPerAcquisition()),
                    decimals(result.deletedPerAcquisition()),
                    decimals(result.childPerAcquisition()),
                    decimals(result.changedPerAcquisition())));
      }
      cells.add(
          row.stream()
              .map(r -> r == null ? "–" : decimals(r.requestsPerAcquisition()))
              .collect(Collectors.joining(" / ")));
      table.row(cells.toArray(String[]::new));
    }
    return table.isEmpty() ? "" : table.render();
  }
}

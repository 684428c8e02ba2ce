package io.lockstep.bench;

import static io.lockstep.bench.Figures.decimals;
import static io.lockstep.bench.Figures.number;
import static io.lockstep.bench.Figures.ratio;

import io.lockstep.bench.GoalVerdicts.Evidence;
import io.lockstep.bench.GoalVerdicts.Reason;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The benchmark page's goal tables, laid out from {@link GoalVerdicts}: each goal met or missed,
 * then each miss with the figures that decided its reason and a link to the paragraph of the page
 * that explains that reason.
 */
final class GoalTables {
  private GoalTables() {}

  /** The goals table; empty if the run measured none. */
  static String goals(GoalVerdicts.Verdicts verdicts) {
    MarkdownTable table = new MarkdownTable("goal", "this run", "");
    GoalVerdicts.RequestCount requests = verdicts.requests();
    if (requests != null) {
      table.row(
          "3 requests per uncontended cycle for every recipe, whatever K",
          requests.met()
              ? "3 on all " + requests.rows() + " rows"
              : "more on "
                  + requests.over().entrySet().stream()
                      .map(e -> e.getKey() + ": " + number(e.getValue()))
                      .collect(Collectors.joining(", ")),
          met(requests.met()));
    }
    allocationGoal(table, verdicts.allocation());
    List<GoalVerdicts.Row> rows = verdicts.throughput();
    if (!rows.isEmpty()) {
      List<GoalVerdicts.Row> missed = rows.stream().filter(r -> !r.met()).toList();
      table.row(
          "Throughput at least Curator's on every row",
          missed.isEmpty()
              ? allRows(rows.size())
              : (rows.size() - missed.size())
                  + " of "
                  + rows.size()
                  + " rows; missed on "
                  + missed.stream()
                      .map(r -> r.name() + " (" + ratio(r.ratio()) + ")")
                      .collect(Collectors.joining(", ")),
          met(missed.isEmpty()));
    }
    for (GoalVerdicts.SpeedUp speedUp : speedUps(verdicts)) {
      table.row(
          String.format(
              Locale.ROOT, "At least %.0f× Curator's %s", speedUp.target(), speedUp.what()),
          ratio(speedUp.speedUp()),
          met(speedUp.met()));
    }
    GoalVerdicts.HandoffGrowth handoff = verdicts.handoff();
    if (handoff != null) {
      table.row(
          "Handoff time that does not grow with the length of the queue",
          String.format(
              Locale.ROOT,
              "%s µs per handoff at N = %d, %s µs at N = %d (%s; allowed: up to %s)",
              number(handoff.shortest().handoffMicros()),
              handoff.shortest().waiters(),
              number(handoff.longest().handoffMicros()),
              handoff.longest().waiters(),
              ratio(handoff.growth()),
              ratio(GoalVerdicts.HANDOFF_GROWTH_ALLOWED)),
          met(handoff.met()));
    }
    serviceGoals(table, verdicts);
    return table.isEmpty() ? "" : table.render();
  }

  /** The allocation goal, with each row's bytes; nothing if the run measured none. */
  private static void allocationGoal(
      MarkdownTable table, List<GoalVerdicts.AllocationRow> allocation) {
    if (allocation.isEmpty()) {
      return;
    }
    List<GoalVerdicts.AllocationRow> missed = allocation.stream().filter(r -> !r.met()).toList();
    table.row(
        "Allocations per uncontended cycle at most Curator's on every single-path row",
        (missed.isEmpty()
                ? allRows(allocation.size())
                : (allocation.size() - missed.size())
                    + " of "
                    + allocation.size()
                    + " rows; missed on "
                    + missed.stream()
                        .map(GoalVerdicts.AllocationRow::name)
                        .collect(Collectors.joining(", ")))
            + " (bytes per cycle, Lockstep / Curator: "
            + allocation.stream()
                .map(r -> r.name() + " " + number(r.bytes()) + " / " + number(r.curatorBytes()))
                .collect(Collectors.joining("; "))
            + ")",
        met(missed.isEmpty()));
  }

  /** The goals of the slow link, handoff speed, many waiters, watch events and the recorder. */
  private static void serviceGoals(MarkdownTable table, GoalVerdicts.Verdicts verdicts) {
    rowsGoal(
        table,
        "Uncontended at 0 ms: at least Curator's on every row, straight and through the proxy",
        verdicts.zeroDelay());
    GoalVerdicts.LinkSpeedUp link = verdicts.slowLink();
    if (link != null) {
      table.row(
          String.format(
              Locale.ROOT,
              "At %s added round trip, at least %s Curator's `InterProcessMutex`",
              SlowLinkRuns.label(link.roundTrip()),
              ratio(GoalVerdicts.SLOW_LINK_GOAL)),
          String.format(
              Locale.ROOT,
              "%s (round trips per cycle: %s / %s, Lockstep / Curator)",
              ratio(link.speedUp()),
              decimals(link.roundTrips()),
              decimals(link.curatorRoundTrips())),
          met(link.met()));
    }
    rowsGoal(
        table,
        "Handoff down a queue of up to "
            + GoalVerdicts.HANDOFF_SPEED_MAX_WAITERS
            + ": at least Curator's speed",
        verdicts.handoffSpeed());
    GoalVerdicts.WaitersGrowth waiters = verdicts.waiters();
    if (waiters != null) {
      table.row(
          String.format(
              Locale.ROOT,
              "Draining %s asynchronous waiters of one client takes at most %s as long as %s",
              number(waiters.longest().waiters()),
              ratio(waiters.allowed()),
              number(waiters.shortest().waiters())),
          String.format(
              Locale.ROOT,
              "%s ms against %s ms (%s)",
              number(waiters.longest().drainMillis()),
              number(waiters.shortest().drainMillis()),
              ratio(waiters.growth())),
          met(waiters.met()));
    }
    GoalVerdicts.WatchGoal watches = verdicts.watches();
    if (watches != null) {
      table.row(
          "Watch events per acquisition, "
              + watches.ours().threads()
              + " clients on one lock: at most Curator's",
          decimals(watches.ours().watchesPerAcquisition())
              + " against "
              + decimals(watches.curator().watchesPerAcquisition())
              + " ("
              + number(watches.ours().traffic().watchesFired())
              + " against "
              + number(watches.curator().traffic().watchesFired())
              + " events in "
              + number(watches.ours().acquisitions())
              + " acquisitions)",
          met(watches.met()));
    }
    List<GoalVerdicts.RecordingRow> recording = verdicts.recording();
    if (!recording.isEmpty()) {
      List<GoalVerdicts.RecordingRow> missed = recording.stream().filter(r -> !r.met()).toList();
      table.row(
          "A Flight Recording with Lockstep's events on leaves its uncontended throughput within"
              + " JMH's error",
          missed.isEmpty()
              ? allRows(recording.size())
              : "missed on "
                  + missed.stream()
                      .map(r -> r.name() + " (" + ratio(r.ratio()) + ")")
                      .collect(Collectors.joining(", ")),
          met(missed.isEmpty()));
    }
  }

  /** A goal met when each of {@code rows} is; nothing if the run measured none. */
  private static void rowsGoal(MarkdownTable table, String goal, List<GoalVerdicts.Row> rows) {
    if (rows.isEmpty()) {
      return;
    }
    List<GoalVerdicts.Row> missed = rows.stream().filter(r -> !r.met()).toList();
    table.row(
        goal,
        missed.isEmpty()
            ? allRows(rows.size())
                + " ("
                + rows.stream().map(r -> ratio(r.ratio())).collect(Collectors.joining(", "))
                + ")"
            : "missed on "
                + missed.stream()
                    .map(r -> r.name() + " (" + ratio(r.ratio()) + ")")
                    .collect(Collectors.joining(", ")),
        met(missed.isEmpty()));
  }

  static String missed(GoalVerdicts.Verdicts verdicts) {
    MarkdownTable table =
        new MarkdownTable("goal or row", "this run", "figures, Lockstep / Curator", "why");
    GoalVerdicts.RequestCount requests = verdicts.requests();
    if (requests != null) {
      requests
          .over()
          .forEach(
              (row, perCycle) ->
                  table.row(
                      "requests per cycle, " + row,
                      number(perCycle),
                      "",
                      why(Reason.MORE_THAN_THREE_REQUESTS)));
    }
    for (GoalVerdicts.AllocationRow row : verdicts.allocation()) {
      if (!row.met()) {
        table.row(
            "bytes allocated per cycle, " + row.name(),
            ratio(row.bytes() / row.curatorBytes()),
            "bytes allocated per cycle " + number(row.bytes()) + " / " + number(row.curatorBytes()),
            why(Reason.MORE_ALLOCATION));
      }
    }
    for (GoalVerdicts.Row row : verdicts.throughput()) {
      if (!row.met()) {
        table.row(row.name(), ratio(row.ratio()), evidence(row.evidence()), why(row.reason()));
      }
    }
    for (GoalVerdicts.SpeedUp speedUp : speedUps(verdicts)) {
      if (!speedUp.met()) {
        table.row(
            number(speedUp.target()) + "×, " + speedUp.what(),
            ratio(speedUp.speedUp()),
            evidence(speedUp.evidence()),
            why(speedUp.reason()));
      }
    }
    GoalVerdicts.HandoffGrowth handoff = verdicts.handoff();
    if (handoff != null && !handoff.met()) {
      HandoffScenario.Result shortest = handoff.shortest();
      HandoffScenario.Result longest = handoff.longest();
      table.row(
          String.format(
              Locale.ROOT,
              "handoff time, N = %d against N = %d",
              longest.waiters(),
              shortest.waiters()),
          ratio(handoff.growth()),
          String.format(
              Locale.ROOT,
              "Lockstep at N = %d → N = %d: requests per handoff %s → %s, response bytes %s → %s,"
                  + " watches fired per delete %s → %s",
              shortest.waiters(),
              longest.waiters(),
              decimals(shortest.requestsPerHandoff()),
              decimals(longest.requestsPerHandoff()),
              number(shortest.responseBytesPerHandoff()),
              number(longest.responseBytesPerHandoff()),
              decimals(shortest.watchesPerDelete()),
              decimals(longest.watchesPerDelete())),
          why(handoff.reason()));
    }
    serviceMisses(table, verdicts);
    if (table.isEmpty()) {
      table.row("every goal", "met", "", "");
    }
    return table.render();
  }

  /**
   * The misses of the service goals not listed as throughput rows already (the rows at 0 ms and of
   * the handoff are).
   */
  private static void serviceMisses(MarkdownTable table, GoalVerdicts.Verdicts verdicts) {
    GoalVerdicts.LinkSpeedUp link = verdicts.slowLink();
    if (link != null && !link.met()) {
      table.row(
          ratio(GoalVerdicts.SLOW_LINK_GOAL)
              + ", mutex at "
              + SlowLinkRuns.label(link.roundTrip())
              + " added round trip",
          ratio(link.speedUp()),
          "round trips per cycle "
              + decimals(link.roundTrips())
              + " / "
              + decimals(link.curatorRoundTrips()),
          why(link.reason()));
    }
    GoalVerdicts.WaitersGrowth waiters = verdicts.waiters();
    if (waiters != null && !waiters.met()) {
      WaitersScenario.Result shortest = waiters.shortest();
      WaitersScenario.Result longest = waiters.longest();
      table.row(
          String.format(
              Locale.ROOT,
              "draining %s waiters against %s",
              number(longest.waiters()),
              number(shortest.waiters())),
          ratio(waiters.growth()),
          String.format(
              Locale.ROOT,
              "Lockstep at N = %s → %s: requests per waiter %s → %s, response bytes per waiter %s"
                  + " → %s",
              number(shortest.waiters()),
              number(longest.waiters()),
              decimals(shortest.requestsPerWaiter()),
              decimals(longest.requestsPerWaiter()),
              number(shortest.responseBytesPerWaiter()),
              number(longest.responseBytesPerWaiter())),
          why(waiters.reason()));
    }
    GoalVerdicts.WatchGoal watches = verdicts.watches();
    if (watches != null && !watches.met()) {
      table.row(
          "watch events per acquisition",
          decimals(watches.ours().watchesPerAcquisition()),
          String.format(
              Locale.ROOT,
              "deleted %s / %s, child %s / %s, changed %s / %s",
              decimals(watches.ours().deletedPerAcquisition()),
              decimals(watches.curator().deletedPerAcquisition()),
              decimals(watches.ours().childPerAcquisition()),
              decimals(watches.curator().childPerAcquisition()),
              decimals(watches.ours().changedPerAcquisition()),
              decimals(watches.curator().changedPerAcquisition())),
          why(watches.reason()));
    }
    for (GoalVerdicts.RecordingRow row : verdicts.recording()) {
      if (!row.met()) {
        table.row(
            "Flight Recording, " + row.name(),
            ratio(row.ratio()),
            "with ÷ without a recording " + ratio(row.ratio()) + " / " + ratio(row.curatorRatio()),
            why(row.reason()));
      }
    }
  }

  private static List<GoalVerdicts.SpeedUp> speedUps(GoalVerdicts.Verdicts verdicts) {
    List<GoalVerdicts.SpeedUp> speedUps = new ArrayList<>();
    if (verdicts.semaphore() != null) {
      speedUps.add(verdicts.semaphore());
    }
    if (verdicts.multi() != null) {
      speedUps.add(verdicts.multi());
    }
    speedUps.addAll(verdicts.cohort());
    return speedUps;
  }

  private static String evidence(Evidence evidence) {
    List<String> parts = new ArrayList<>();
    pair(parts, "requests", decimals(evidence.requests()), decimals(evidence.curatorRequests()));
    pair(parts, "writes", decimals(evidence.writes()), decimals(evidence.curatorWrites()));
    pair(parts, "response bytes", number(evidence.bytes()), number(evidence.curatorBytes()));
    pair(parts, "JMH error ±", number(evidence.error()), number(evidence.curatorError()));
    return String.join(", ", parts);
  }

  /** Adds "name ours / curator" unless both are missing. */
  private static void pair(List<String> parts, String name, String ours, String curator) {
    if (!ours.equals("–") || !curator.equals("–")) {
      parts.add(name + " " + ours + " / " + curator);
    }
  }

  /** "all 4 rows", "the one row". */
  private static String allRows(int rows) {
    return rows == 1 ? "the one row" : "all " + rows + " rows";
  }

  private static String why(Reason reason) {
    return "[" + reason.label() + "](#" + reason.anchor() + ")";
  }

  private static String met(boolean met) {
    return met ? "met" : "**missed**";
  }
}

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
    List<GoalVerdicts.Row> rows = verdicts.throughput();
    if (!rows.isEmpty()) {
      List<GoalVerdicts.Row> missed = rows.stream().filter(r -> !r.met()).toList();
      table.row(
          "Throughput at least Curator's on every row",
          missed.isEmpty()
              ? "all " + rows.size() + " rows"
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
    return table.isEmpty() ? "" : table.render();
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
    if (table.isEmpty()) {
      table.row("every goal", "met", "", "");
    }
    return table.render();
  }

  private static List<GoalVerdicts.SpeedUp> speedUps(GoalVerdicts.Verdicts verdicts) {
    List<GoalVerdicts.SpeedUp> speedUps = new ArrayList<>();
    if (verdicts.semaphore() != null) {
      speedUps.add(verdicts.semaphore());
    }
    if (verdicts.multi() != null) {
      speedUps.add(verdicts.multi());
    }
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

  private static String why(Reason reason) {
    return "[" + reason.label() + "](#" + reason.anchor() + ")";
  }

  private static String met(boolean met) {
    return met ? "met" : "**missed**";
  }
}

package io.lockstep.faults;

import io.lockstep.recipes.locks.LockState;
import io.lockstep.testing.ExclusionChecker;
import io.lockstep.testing.LockPart;
import io.lockstep.testing.Recipe;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Replays a run's history, in stamp order, into an {@link ExclusionChecker} whose clock is the
 * replay's: each worker's {@code granted}, {@code state} and {@code end} become the checker's
 * begin, pause or resume, and end, at the instant the worker stamped them. The stamps are the
 * workers' {@code System.nanoTime()}, which on Linux is {@code CLOCK_MONOTONIC}, one clock for the
 * whole machine, so holds of different processes compare as holds of one JVM would.
 *
 * <p>A hold counts, as in the chaos run, from its grant until its end or its first {@code AT_RISK}
 * or {@code LOST} (and again from a {@code HELD} after {@code AT_RISK}). A process frozen past its
 * session, or killed, cannot be told in time: its session is recorded as ended when the fault
 * began, and its holds stop counting then; fencing is what must protect the resource from it.
 *
 * <p>During the replay, each write the fenced store refused is judged at the instant it was
 * refused: the store may refuse only a holder that no longer counted (told, or its session ended)
 * or one overtaken by a hold with a higher token that began before the refusal.
 */
final class HistoryReplay {
  /** One hold of the history. */
  record Hold(
      String key,
      int worker,
      String thread,
      List<LockPart> parts,
      long token,
      long session,
      long grantedAt,
      boolean counting,
      boolean heldTold,
      ExclusionChecker.Hold recorded) {}

  private record Step(long at, int order, Runnable action) {}

  private final RunRecord record;
  private final AtomicLong clock;
  private final ExclusionChecker checker;
  private final Map<String, Hold> holds = new HashMap<>();
  private final Map<String, Long> ends = new HashMap<>();
  private final Map<String, List<Event>> states = new HashMap<>();
  private final List<String> wrongRefusals = new ArrayList<>();
  private int refusals;

  HistoryReplay(RunRecord record) {
    this.record = record;
    this.clock = new AtomicLong(record.start());
    this.checker = new ExclusionChecker(clock::get);
    record.groups().values().forEach(g -> g.capacities().forEach(checker::capacity));
    for (FaultRecord fault : record.faults()) {
      if (fault.kind() == FaultKind.KILL_HOLDER
          || fault.kind().process()
              && fault.pastSession()
              && fault.kind() != FaultKind.CLIENT_EXPIRY) {
        checker.sessionEnded(fault.session(), fault.start());
      }
    }
    List<Step> steps = new ArrayList<>();
    for (Event event : record.events()) {
      steps.add(new Step(event.at(), 0, () -> apply(event)));
    }
    for (StoreService.Decision decision : record.decisions()) {
      if (!decision.accepted()) {
        steps.add(new Step(decision.at(), 1, () -> judge(decision)));
      }
    }
    steps.sort(Comparator.comparingLong(Step::at).thenComparingInt(Step::order));
    long last = record.end();
    for (Step step : steps) {
      clock.set(step.at());
      step.action().run();
      last = Math.max(last, step.at());
    }
    clock.set(last);
  }

  private void apply(Event event) {
    switch (event.type()) {
      case "granted" -> {
        String key = event.field(1);
        List<LockPart> parts = parseParts(event.field(6));
        long token = event.longField(2);
        long session = Long.parseUnsignedLong(event.field(3), 16);
        boolean counting = event.field(4).equals("1");
        ExclusionChecker.Hold recorded = checker.begin(key, parts, token, session, counting);
        holds.put(
            key,
            new Hold(
                key,
                event.worker(),
                event.thread(),
                parts,
                token,
                session,
                event.at(),
                counting,
                event.fields().size() > 7 && event.field(7).equals("1"),
                recorded));
      }
      case "state" -> {
        Hold hold = holds.get(event.field(1));
        if (hold != null) {
          states.computeIfAbsent(hold.key(), k -> new ArrayList<>()).add(event);
          LockState state = LockState.valueOf(event.field(2));
          if (state == LockState.HELD) {
            checker.resume(hold.recorded());
          } else {
            checker.pause(hold.recorded());
          }
        }
      }
      case "end" -> {
        Hold hold = holds.get(event.field(1));
        if (hold != null) {
          checker.end(hold.recorded());
          ends.putIfAbsent(hold.key(), event.at());
        }
      }
      default -> {}
    }
  }

  private void judge(StoreService.Decision refused) {
    refusals++;
    Hold hold = holds.get(refused.holdKey());
    if (hold == null) {
      wrongRefusals.add("the store refused a write of a hold never granted: " + refused);
      return;
    }
    boolean counting = checker.isCounting(hold.recorded());
    boolean overtaken =
        refused.resource().contains("#")
            ? overtakenInThread(hold, refused)
            : checker.overtakenBefore(refused.resource(), refused.token(), refused.at());
    if (counting && !overtaken) {
      wrongRefusals.add(
          "the store refused the current holder "
              + hold.key()
              + " (token "
              + refused.token()
              + ", "
              + refused.resource()
              + "), which had not been told of risk or loss nor overtaken");
    }
  }

  /** For a thread's own resource: a later hold of the same thread, with a higher token, began. */
  private boolean overtakenInThread(Hold hold, StoreService.Decision refused) {
    return holds.values().stream()
        .anyMatch(
            other ->
                other.worker() == hold.worker()
                    && other.thread().equals(hold.thread())
                    && other.token() > refused.token()
                    && other.grantedAt() < refused.at());
  }

  /** Parses {@code MODE:path+MODE:path}. */
  static List<LockPart> parseParts(String text) {
    List<LockPart> parts = new ArrayList<>();
    for (String part : text.split("\\+")) {
      int colon = part.indexOf(':');
      parts.add(new LockPart(Recipe.valueOf(part.substring(0, colon)), part.substring(colon + 1)));
    }
    return parts;
  }

  RunRecord record() {
    return record;
  }

  ExclusionChecker checker() {
    return checker;
  }

  /** Every hold, by key. */
  Map<String, Hold> holds() {
    return holds;
  }

  /** When the hold ended (its {@code end}), or null if it never did. */
  Long endOf(String key) {
    return ends.get(key);
  }

  /** The {@code state} events of the hold, in order. */
  List<Event> statesOf(String key) {
    return states.getOrDefault(key, List.of());
  }

  /** The refusals of the store that no rule allows, described. */
  List<String> wrongRefusals() {
    return wrongRefusals;
  }

  /** How many refusals were judged. */
  int refusals() {
    return refusals;
  }

  /** The stretches during which holds counted, per group. */
  Map<String, List<ExclusionChecker.Segment>> segmentsByGroup() {
    Map<String, List<ExclusionChecker.Segment>> byGroup = new HashMap<>();
    for (ExclusionChecker.Segment segment : checker.segments()) {
      GroupSpec group = record.groupOfPath(segment.path());
      if (group != null) {
        byGroup.computeIfAbsent(group.name(), g -> new ArrayList<>()).add(segment);
      }
    }
    return byGroup;
  }
}

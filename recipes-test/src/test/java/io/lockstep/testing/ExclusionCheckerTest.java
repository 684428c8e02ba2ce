package io.lockstep.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The exclusion checker itself: each check reports the fault it is there to find. */
@Timeout(10)
class ExclusionCheckerTest {
  private static final List<LockPart> EXCLUSIVE = List.of(LockPart.mutex("/p"));
  private static final List<LockPart> SHARED = List.of(LockPart.read("/p"));

  /** A clock the test moves: one tick per call, so every event has its own instant. */
  private final AtomicLong now = new AtomicLong();

  private final ExclusionChecker checker = new ExclusionChecker(now::incrementAndGet);

  @Test
  void overlappingExclusiveHolds_ofOnePath_areReported() {
    ExclusionChecker.Hold first = checker.begin("a", EXCLUSIVE, 10, 1);
    ExclusionChecker.Hold second = checker.begin("b", EXCLUSIVE, 11, 2);
    checker.end(first);
    checker.end(second);

    assertThat(checker.overlaps()).singleElement().asString().contains("overlap on /p");
    assertThat(checker.verdict().held()).isFalse();
  }

  @Test
  void sharedHoldsMayOverlap_butNotWithAnExclusiveOne() {
    ExclusionChecker.Hold reader1 = checker.begin("a", SHARED, 10, 1);
    ExclusionChecker.Hold reader2 = checker.begin("b", SHARED, 11, 2);
    checker.end(reader1);
    checker.end(reader2);
    assertThat(checker.overlaps()).isEmpty();

    ExclusionChecker.Hold writer = checker.begin("c", List.of(LockPart.write("/p")), 12, 3);
    ExclusionChecker.Hold lateReader = checker.begin("d", SHARED, 13, 4);
    checker.end(writer);
    checker.end(lateReader);
    assertThat(checker.overlaps()).hasSize(1);
  }

  @Test
  void holdsInSequence_withRisingTokens_areClean_andAFallingTokenIsReported() {
    checker.end(checker.begin("a", EXCLUSIVE, 10, 1));
    checker.end(checker.begin("b", EXCLUSIVE, 20, 2));
    assertThat(checker.overlaps()).isEmpty();
    assertThat(checker.tokenOrderViolations()).isEmpty();

    checker.end(checker.begin("c", EXCLUSIVE, 15, 3));
    assertThat(checker.tokenOrderViolations()).isNotEmpty();
  }

  @Test
  void holdsWithoutTokens_areLeftOutOfTheTokenOrder() {
    checker.end(checker.begin("a", EXCLUSIVE, 0, 1));
    checker.end(checker.begin("b", EXCLUSIVE, 0, 2));

    assertThat(checker.tokenOrderViolations()).isEmpty();
    assertThat(checker.verdict().held()).isTrue();
  }

  @Test
  void aHoldToldAtRisk_stopsCounting_untilConfirmedAgain() {
    ExclusionChecker.Hold hold = checker.begin("a", EXCLUSIVE, 10, 1);
    checker.pause(hold);
    assertThat(checker.isCounting(hold)).isFalse();
    checker.end(checker.begin("b", EXCLUSIVE, 11, 2));

    checker.resume(hold);
    assertThat(checker.isCounting(hold)).isTrue();
    checker.end(hold);

    assertThat(checker.segments()).hasSize(3);
    assertThat(checker.overlaps()).isEmpty();
  }

  @Test
  void aHoldWhoseSessionEnded_stopsCountingThen_andItsOverlapIsExcused() {
    ExclusionChecker.Hold paused = checker.begin("a", EXCLUSIVE, 10, 7);
    checker.sessionEnds(7);
    ExclusionChecker.Hold next = checker.begin("b", EXCLUSIVE, 11, 8);
    assertThat(checker.isCounting(paused)).isFalse();
    checker.end(next);
    checker.end(paused);

    ExclusionChecker.Verdict verdict = checker.verdict();
    assertThat(verdict.held()).isTrue();
    assertThat(verdict.holds()).isEqualTo(2);
    assertThat(verdict.overlaps()).isEqualTo(1);
    assertThat(verdict.excused()).isEqualTo(1);
  }

  @Test
  void aHoldBegunPaused_doesNotCountUntilResumed() {
    ExclusionChecker.Hold told = checker.begin("a", EXCLUSIVE, 10, 1, false);
    checker.end(checker.begin("b", EXCLUSIVE, 11, 2));
    checker.end(told);

    assertThat(checker.segments()).hasSize(1);
    assertThat(checker.verdict().overlaps()).isEqualTo(1);
    assertThat(checker.verdict().excused()).isEqualTo(1);
  }

  @Test
  void overtaken_meansAHigherTokenBeganCountingEarlier() {
    checker.end(checker.begin("a", EXCLUSIVE, 10, 1));
    long between = now.get();
    checker.end(checker.begin("b", EXCLUSIVE, 20, 2));

    assertThat(checker.overtakenBefore("/p", 10, now.get())).isTrue();
    assertThat(checker.overtakenBefore("/p", 10, between)).isFalse();
    assertThat(checker.overtakenBefore("/p", 20, now.get())).isFalse();
  }

  @Test
  void aPathWithACapacity_allowsThatManyHolds_andReportsOneMore() {
    checker.capacity("/p", 2);
    ExclusionChecker.Hold first = checker.begin("a", EXCLUSIVE, 10, 1);
    ExclusionChecker.Hold second = checker.begin("b", EXCLUSIVE, 9, 2);
    assertThat(checker.verdict().held()).as("two leases of two, tokens unordered").isTrue();

    ExclusionChecker.Hold third = checker.begin("c", EXCLUSIVE, 11, 3);
    checker.end(first);
    ExclusionChecker.Hold fourth = checker.begin("d", EXCLUSIVE, 12, 4);
    checker.end(second);
    checker.end(third);
    checker.end(fourth);

    assertThat(checker.overlaps()).isEmpty();
    assertThat(checker.tokenOrderViolations()).isEmpty();
    assertThat(checker.capacityViolations())
        .singleElement()
        .asString()
        .startsWith("3 holds of /p at once (capacity 2)")
        .contains("a (", "b (", "c (");
    assertThat(checker.verdict().held()).isFalse();
  }

  @Test
  void aCountedHold_pausedOrOfAnEndedSession_leavesRoomForAnother() {
    checker.capacity("/p", 1);
    ExclusionChecker.Hold toldAtRisk = checker.begin("a", EXCLUSIVE, 10, 1);
    checker.pause(toldAtRisk);
    ExclusionChecker.Hold expired = checker.begin("b", EXCLUSIVE, 11, 2);
    checker.sessionEnds(2);
    checker.end(checker.begin("c", EXCLUSIVE, 12, 3));
    checker.end(toldAtRisk);
    checker.end(expired);

    assertThat(checker.capacityViolations()).isEmpty();
    assertThat(checker.verdict().held()).isTrue();
  }
}

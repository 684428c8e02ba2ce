package io.lockstep.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The chaos checkers themselves: each one reports the fault it is there to find. */
@Timeout(10)
class HistoryTest {
  @Test
  void overlappingExclusiveHolds_ofOnePath_areReported() {
    History history = new History();
    History.Hold first = history.begin("a", List.of("/p"), true, 10);
    History.Hold second = history.begin("b", List.of("/p"), true, 11);
    history.pause(first);
    history.pause(second);

    assertThat(history.overlaps()).singleElement().asString().contains("overlap on /p");
  }

  @Test
  void sharedHoldsMayOverlap_butNotWithAnExclusiveOne() {
    History history = new History();
    History.Hold reader1 = history.begin("a", List.of("/p"), false, 10);
    History.Hold reader2 = history.begin("b", List.of("/p"), false, 11);
    history.pause(reader1);
    history.pause(reader2);
    assertThat(history.overlaps()).isEmpty();

    History.Hold writer = history.begin("c", List.of("/p"), true, 12);
    History.Hold lateReader = history.begin("d", List.of("/p"), false, 13);
    history.pause(writer);
    history.pause(lateReader);
    assertThat(history.overlaps()).hasSize(1);
  }

  @Test
  void holdsInSequence_withRisingTokens_areClean_andAFallingTokenIsReported() {
    History history = new History();
    History.Hold first = history.begin("a", List.of("/p"), true, 10);
    history.pause(first);
    History.Hold second = history.begin("b", List.of("/p"), true, 20);
    history.pause(second);
    assertThat(history.overlaps()).isEmpty();
    assertThat(history.tokenOrderViolations()).isEmpty();

    History.Hold stale = history.begin("c", List.of("/p"), true, 15);
    history.pause(stale);
    assertThat(history.tokenOrderViolations()).isNotEmpty();
  }

  @Test
  void aHoldToldAtRisk_stopsCounting_untilConfirmedAgain() {
    History history = new History();
    History.Hold hold = history.begin("a", List.of("/p"), true, 10);
    history.pause(hold);
    assertThat(history.isCounting(hold)).isFalse();
    History.Hold other = history.begin("b", List.of("/p"), true, 11);
    history.pause(other);

    history.resume(hold);
    history.pause(hold);

    assertThat(history.segmentCount()).isEqualTo(3);
    assertThat(history.overlaps()).isEmpty();
  }

  @Test
  void fencedResource_refusesATokenBelowOneItAccepted() {
    FencedResource resource = new FencedResource();

    assertThat(resource.write("k", 10)).isTrue();
    assertThat(resource.write("k", 10)).isTrue();
    assertThat(resource.write("k", 9)).isFalse();
    assertThat(resource.highest("k")).isEqualTo(10);
  }
}

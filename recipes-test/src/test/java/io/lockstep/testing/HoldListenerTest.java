package io.lockstep.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockStateChange;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The listener that keeps a hold in step with its lock's notices, including notices that arrive
 * between the grant and the moment the acquiring thread records its hold.
 */
@Timeout(10)
class HoldListenerTest {
  private static final List<LockPart> PARTS = List.of(LockPart.mutex("/p"));

  private final AtomicLong now = new AtomicLong();
  private final ExclusionChecker checker = new ExclusionChecker(now::incrementAndGet);
  private final HoldListener listener = new HoldListener(checker);

  private void tell(LockState state, long token) {
    listener.stateChanged(new LockStateChange("/p", state, token));
  }

  @Test
  void atRiskBeforeTheHoldBegins_beginsItPaused() {
    tell(LockState.HELD, 10);
    tell(LockState.AT_RISK, 10);

    ExclusionChecker.Hold hold = listener.begin("a", PARTS, 10, 1);

    assertThat(checker.isCounting(hold)).isFalse();
  }

  @Test
  void lostBeforeTheHoldBegins_beginsItPaused_andAnOverlapAfterIsExcused() {
    tell(LockState.LOST, 10);
    ExclusionChecker.Hold hold = listener.begin("a", PARTS, 10, 1);
    checker.end(checker.begin("b", PARTS, 11, 2));
    listener.end();

    assertThat(checker.isCounting(hold)).isFalse();
    assertThat(checker.verdict().held()).isTrue();
    assertThat(checker.verdict().excused()).isEqualTo(1);
  }

  @Test
  void heldAgainBeforeTheHoldBegins_beginsItCounting() {
    tell(LockState.AT_RISK, 10);
    tell(LockState.HELD, 10);

    assertThat(checker.isCounting(listener.begin("a", PARTS, 10, 1))).isTrue();
  }

  @Test
  void aNoticeForAnotherToken_doesNotTouchTheHold() {
    tell(LockState.LOST, 9);
    ExclusionChecker.Hold hold = listener.begin("a", PARTS, 10, 1);
    tell(LockState.AT_RISK, 9);

    assertThat(checker.isCounting(hold)).isTrue();
  }

  @Test
  void noticesDuringTheHold_pauseAndResumeIt_andEndStopsIt() {
    ExclusionChecker.Hold hold = listener.begin("a", PARTS, 10, 1);
    tell(LockState.AT_RISK, 10);
    assertThat(checker.isCounting(hold)).isFalse();
    tell(LockState.HELD, 10);
    assertThat(checker.isCounting(hold)).isTrue();

    listener.end();
    tell(LockState.HELD, 10);

    assertThat(checker.isCounting(hold)).isFalse();
    assertThat(listener.current()).isNull();
    assertThat(checker.segments()).hasSize(2);
  }

  @Test
  void aHoldFoundLostBeforeItsTokenWasRead_beginsPaused() {
    ExclusionChecker.Hold hold = listener.begin("a", PARTS, 0, 1, false);

    assertThat(checker.isCounting(hold)).isFalse();
  }
}

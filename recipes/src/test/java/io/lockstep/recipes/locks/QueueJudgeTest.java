package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The queue judge: one reading of the queues in, hold / watch / missing out. */
@Timeout(10)
class QueueJudgeTest {
  private static final Slot MUTEX = Slot.of("/m", LockDriver.mutex(), null);
  private static final Slot READ = Slot.of("/rw", ReadWriteDriver.READ, null);
  private static final String M1 = "_c_a-lock-0000000001";
  private static final String M2 = "_c_b-lock-0000000002";
  private static final String M3 = "_c_c-lock-0000000003";

  @Test
  void first_holds() {
    assertThat(QueueJudge.judge(List.of(MUTEX), List.of("/m/" + M1), List.of(List.of(M2, M1))))
        .isEqualTo(QueueJudge.Verdict.HOLD);
  }

  @Test
  void secondInAnAppendOnlyQueue_watchesTheHead_asTheHead() {
    assertThat(QueueJudge.judge(List.of(MUTEX), List.of("/m/" + M2), List.of(List.of(M2, M1))))
        .isEqualTo(new QueueJudge.Verdict(false, "/m/" + M1, true));
  }

  @Test
  void thirdInTheQueue_watchesItsPredecessor_notAsTheHead() {
    assertThat(QueueJudge.judge(List.of(MUTEX), List.of("/m/" + M3), List.of(List.of(M3, M1, M2))))
        .isEqualTo(new QueueJudge.Verdict(false, "/m/" + M2, false));
  }

  @Test
  void ourNodeMissing_isReported() {
    assertThat(QueueJudge.judge(List.of(MUTEX), List.of("/m/" + M3), List.of(List.of(M1, M2))))
        .isEqualTo(QueueJudge.Verdict.MISSING);
  }

  @Test
  void aReadWriteQueue_neverTakesTheHeadShortcut_sinceATieCanAppearBelowUs() {
    String w1 = "_c_w-__WRIT__0000000001";
    String r2 = "_c_r-__READ__0000000002";
    assertThat(QueueJudge.judge(List.of(READ), List.of("/rw/" + r2), List.of(List.of(r2, w1))))
        .isEqualTo(new QueueJudge.Verdict(false, "/rw/" + w1, false));
  }

  @Test
  void severalQueues_theFirstThatDoesNotHoldDecides_andNeverAsTheHead() {
    Slot other = Slot.of("/n", LockDriver.mutex(), null);
    assertThat(
            QueueJudge.judge(
                List.of(MUTEX, other),
                List.of("/m/" + M1, "/n/" + M2),
                List.of(List.of(M1), List.of(M1, M2))))
        .isEqualTo(new QueueJudge.Verdict(false, "/n/" + M1, false));
  }

  @Test
  void aDriverNamingAStranger_isRefused() {
    LockDriver stranger =
        new LockDriver() {
          @Override
          public String lockName() {
            return "lock-";
          }

          @Override
          public LockDecision decide(List<String> sortedNodeNames, String ourNodeName) {
            return LockDecision.watch("nobody");
          }
        };
    assertThatThrownBy(
            () ->
                QueueJudge.judge(
                    List.of(Slot.of("/m", stranger, null)),
                    List.of("/m/" + M1),
                    List.of(List.of(M1))))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("nobody");
  }
}

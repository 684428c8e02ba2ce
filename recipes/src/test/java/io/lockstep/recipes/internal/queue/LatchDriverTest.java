package io.lockstep.recipes.internal.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.locks.LockDecision;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Curator's {@code LeaderLatch} order, decided without a server, through the generic path of the
 * judge (the latch driver is not the mutex driver the judge scans specially).
 */
@Timeout(10)
class LatchDriverTest {
  private static final Slot LATCH = Slot.of("/e", LatchDriver.INSTANCE, new byte[0]);
  private static final String L1 = "_c_ffffffff-0000-0000-0000-000000000000-latch-0000000001";
  private static final String L2 = "_c_00000000-0000-0000-0000-000000000000-latch-0000000002";
  private static final String L3 = "_c_88888888-0000-0000-0000-000000000000-latch-0000000010";

  @Test
  void sortsBySequenceSuffixAfterTheLockName_notByProtectionId() {
    assertThat(QueueOrder.sort(List.of(L3, L1, L2), LatchDriver.INSTANCE))
        .containsExactly(L1, L2, L3);
    assertThat(LatchDriver.INSTANCE.sortKey(L3)).isEqualTo("0000000010");
    assertThat(LatchDriver.INSTANCE.lockName()).isEqualTo("latch-");
  }

  @Test
  void firstLeads_othersWatchTheirImmediatePredecessor() {
    List<String> queue = List.of(L1, L2, L3);

    assertThat(LatchDriver.INSTANCE.decide(queue, L1)).isEqualTo(LockDecision.hold());
    assertThat(LatchDriver.INSTANCE.decide(queue, L3)).isEqualTo(LockDecision.watch(L2));
    assertThat(LatchDriver.INSTANCE.newNodesSortLast()).isTrue();
  }

  @Test
  void theGenericJudge_decidesAsCuratorsLatch_withTheHeadShortcut() {
    List<List<String>> children = List.of(List.of(L3, L2, L1, "not-a-participant"));

    assertThat(QueueJudge.judge(List.of(LATCH), List.of("/e/" + L1), children).holds()).isTrue();
    assertThat(QueueJudge.judge(List.of(LATCH), List.of("/e/" + L2), children))
        .isEqualTo(new QueueJudge.Verdict(false, "/e/" + L1, true));
    assertThat(QueueJudge.judge(List.of(LATCH), List.of("/e/" + L3), children))
        .isEqualTo(new QueueJudge.Verdict(false, "/e/" + L2, false));
    assertThat(
            QueueJudge.judge(List.of(LATCH), List.of("/e/" + L3), List.of(List.of(L1, L2)))
                .nodesMissing())
        .isTrue();
  }
}

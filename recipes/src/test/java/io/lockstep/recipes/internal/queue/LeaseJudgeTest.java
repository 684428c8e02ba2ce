package io.lockstep.recipes.internal.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The lease rule of a counting semaphore: granted while fewer than max leases sort ahead. */
@Timeout(10)
class LeaseJudgeTest {
  private static final String DIR = "/sem/leases";

  private static String lease(String id, int sequence) {
    return "_c_" + id + "-lease-" + String.format("%010d", sequence);
  }

  private static QueueJudge.Verdict judge(int max, String ours, List<String> children) {
    return QueueJudge.judge(
        List.of(Slot.of(DIR, new LeaseDriver(max), null)),
        List.of(DIR + "/" + ours),
        List.of(children));
  }

  @Test
  void fewerThanMaxAhead_holds_evenWhenMoreNodesFollow() {
    String ours = lease("c", 3);
    List<String> children = List.of(lease("e", 5), lease("a", 1), ours, lease("b", 2));
    assertThat(judge(3, ours, children)).isEqualTo(QueueJudge.Verdict.HOLD);
  }

  @Test
  void maxAhead_waitsForAChangeOfTheDirectory_notForANode() {
    String ours = lease("d", 4);
    List<String> children = List.of(lease("a", 1), lease("b", 2), lease("c", 3), ours);
    assertThat(judge(3, ours, children)).isEqualTo(new QueueJudge.Verdict(false, DIR, false, true));
    assertThat(judge(3, ours, children).holds()).isFalse();
  }

  @Test
  void ourNodeMissing_isReported() {
    assertThat(judge(2, lease("z", 9), List.of(lease("a", 1))))
        .isEqualTo(QueueJudge.Verdict.MISSING);
  }

  @Test
  void childrenThatAreNoLockNodes_holdNoLease_andAreNotCounted() {
    String ours = lease("c", 3);
    List<String> children = List.of("stray", "locks-dir", lease("a", 1), ours);
    assertThat(judge(2, ours, children)).isEqualTo(QueueJudge.Verdict.HOLD);
  }

  @Test
  void theRankRule_neverGrantsMoreThanMax_andAgreesWithCuratorsCountForTheFirstMax() {
    Random random = new Random(22);
    for (int round = 0; round < 200; round++) {
      int max = 1 + random.nextInt(4);
      int n = 1 + random.nextInt(8);
      List<String> children = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        children.add(lease("n" + i, 100 + 3 * i));
      }
      Collections.shuffle(children, random);
      int granted = 0;
      for (String ours : children) {
        if (judge(max, ours, children).holds()) {
          granted++;
          int sequence = Integer.parseInt(ours.substring(ours.length() - 10));
          assertThat((sequence - 100) / 3).isLessThan(max); // only the first max hold
        }
      }
      assertThat(granted).isEqualTo(Math.min(max, n));
    }
  }

  @Test
  void maxLeasesBelowOne_isRefused() {
    assertThatThrownBy(() -> new LeaseDriver(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxLeases");
  }

  @Test
  void newNodesSortLast_isFalse_soNoHeadShortcutApplies() {
    assertThat(new LeaseDriver(2).newNodesSortLast()).isFalse();
    assertThat(new LeaseDriver(2).lockName()).isEqualTo("lease-");
  }
}

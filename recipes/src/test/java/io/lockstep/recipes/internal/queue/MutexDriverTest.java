package io.lockstep.recipes.internal.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.recipes.locks.LockDecision;
import io.lockstep.recipes.locks.LockDriver;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Curator's mutex order, decided without a server. */
@Timeout(10)
class MutexDriverTest {
  private final LockDriver driver = LockDriver.mutex();

  @Test
  void sortsBySequenceSuffix_notByProtectionId() {
    List<String> children =
        List.of(
            "_c_ffffffff-0000-0000-0000-000000000000-lock-0000000002",
            "_c_00000000-0000-0000-0000-000000000000-lock-0000000010",
            "_c_88888888-0000-0000-0000-000000000000-lock-0000000001");

    assertThat(QueueOrder.sort(children, driver))
        .extracting(name -> name.substring(name.length() - 2))
        .containsExactly("01", "02", "10");
  }

  @Test
  void childWithoutTheLockName_sortsByItsFullName() {
    assertThat(driver.sortKey("unrelated")).isEqualTo("unrelated");
    assertThat(driver.sortKey("_c_x-lock-0000000007")).isEqualTo("0000000007");
  }

  @Test
  void firstHolds_othersWatchTheirImmediatePredecessor() {
    List<String> queue = List.of("a-lock-0000000001", "b-lock-0000000002", "c-lock-0000000003");

    assertThat(driver.decide(queue, "a-lock-0000000001")).isEqualTo(LockDecision.hold());
    assertThat(driver.decide(queue, "c-lock-0000000003"))
        .isEqualTo(LockDecision.watch("b-lock-0000000002"));
    assertThat(driver.newNodesSortLast()).isTrue();
  }

  @Test
  void decision_describesExactlyOneOutcome() {
    assertThatThrownBy(() -> new LockDecision(true, "x"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new LockDecision(false, null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(LockDecision.hold().holds()).isTrue();
    assertThat(LockDecision.watch("n").watchNode()).isEqualTo("n");
  }

  @Test
  void anAllDigitLockName_sortsByTheSequenceNumber_notInsideIt() {
    LockDriver digits =
        new LockDriver() {
          @Override
          public String lockName() {
            return "7";
          }

          @Override
          public LockDecision decide(List<String> sortedNodeNames, String ourNodeName) {
            return LockDecision.hold();
          }
        };
    String holder = "_c_0d1e-7a2b-7" + "0000000079";
    String newcomer = "_c_9f3c-4b1d-7" + "0000000080";

    assertThat(digits.sortKey(holder)).isEqualTo("0000000079");
    assertThat(QueueOrder.sort(List.of(newcomer, holder), digits))
        .containsExactly(holder, newcomer);
  }
}

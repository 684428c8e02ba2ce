package io.lockstep.recipes.internal.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.recipes.locks.LockDecision;
import io.lockstep.recipes.locks.LockDriver;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
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

  @Test
  void theMutexScan_judgesAsSortingAndAskingTheMutexDriverDoes() {
    LockDriver sorted = // the mutex order, but not the built-in instance: judged by sorting
        new LockDriver() {
          @Override
          public String lockName() {
            return MutexDriver.LOCK_NAME;
          }

          @Override
          public LockDecision decide(List<String> sortedNodeNames, String ourNodeName) {
            return MutexDriver.INSTANCE.decide(sortedNodeNames, ourNodeName);
          }

          @Override
          public boolean newNodesSortLast() {
            return true;
          }
        };
    Random random = new Random(42);
    for (int round = 0; round < 2_000; round++) {
      List<String> names = new ArrayList<>();
      int size = 1 + random.nextInt(12);
      for (int i = 0; i < size; i++) {
        names.add(randomName(random, i));
      }
      String ours = names.get(random.nextInt(size));
      List<String> read = new ArrayList<>(names);
      if (random.nextInt(10) == 0) {
        read.remove(ours);
      }
      Collections.shuffle(read, random);
      for (List<Slot> slots :
          List.of(
              List.of(Slot.of("/m", LockDriver.mutex(), null)),
              List.of(Slot.of("/m", LockDriver.mutex(), null), MUTEX))) {
        List<Slot> same = new ArrayList<>(slots);
        same.set(0, Slot.of("/m", sorted, null));
        List<String> ourNodes =
            slots.size() == 1 ? List.of("/m/" + ours) : List.of("/m/" + ours, "/m/" + M1);
        List<List<String>> children =
            slots.size() == 1 ? List.of(read) : List.of(read, List.of(M1));
        assertThat(QueueJudge.judge(slots, ourNodes, children))
            .as("%s in %s", ours, read)
            .isEqualTo(QueueJudge.judge(same, ourNodes, children));
      }
    }
  }

  /** Curator's names, ties on the sequence, names without a sequence or without the lock name. */
  private static String randomName(Random random, int index) {
    String sequence = String.format("%010d", random.nextInt(20));
    switch (random.nextInt(6)) {
      case 0:
        return "x" + index + "-lock-" + "00000000" + random.nextInt(5);
      case 1:
        return "other-" + index + "-" + sequence;
      case 2:
        return "_c_" + index + "-lock-x-lock-" + sequence;
      default:
        return "_c_" + UUID.randomUUID() + "-lock-" + sequence;
    }
  }

  // Issue 21: a child that is no lock node was taken for the holder when it sorted first.
  @Test
  void childrenThatAreNoLockNodes_areNoParticipants_forAnyDriver() {
    List<String> strays = List.of("0000", "%2Fx", "-nested", "keys");
    List<String> mutexQueue = new java.util.ArrayList<>(strays);
    mutexQueue.add(M1);
    assertThat(QueueJudge.judge(List.of(MUTEX), List.of("/m/" + M1), List.of(mutexQueue)))
        .isEqualTo(QueueJudge.Verdict.HOLD);
    String reader = "_c_r-__READ__0000000004";
    List<String> readQueue = new java.util.ArrayList<>(strays);
    readQueue.add(reader);
    assertThat(QueueJudge.judge(List.of(READ), List.of("/rw/" + reader), List.of(readQueue)))
        .isEqualTo(QueueJudge.Verdict.HOLD);
    assertThat(QueueOrder.lockNodes(mutexQueue)).containsExactly(M1);
  }

  @Test
  void duplicates_areOtherNodesWithOurProtectionId_inEachQueue() {
    String id = "0b4cf1de-6f3a-4a3e-9a9e-1d2c3b4a5f60";
    String ghost = "_c_" + id + "-lock-0000000001";
    String ours = "_c_" + id + "-lock-0000000004";
    Slot other = Slot.of("/n", LockDriver.mutex(), null);
    assertThat(
            QueueJudge.duplicates(
                List.of(MUTEX, other),
                List.of("/m/" + ours, "/n/" + ours),
                List.of(List.of(ghost, M2, ours), List.of(ours, M3))))
        .containsExactly("/m/" + ghost);
    assertThat(
            QueueJudge.duplicates(
                List.of(MUTEX), List.of("/m/" + ours), List.of(List.of(M1, ours, M3))))
        .isEmpty();
  }

  @Test
  void prefixOf_isTheProtectedPartOfAName_orNull() {
    String id = "0b4cf1de-6f3a-4a3e-9a9e-1d2c3b4a5f60";
    assertThat(NodeNames.prefixOf("_c_" + id + "-__READ__0000000007"))
        .isEqualTo(NodeNames.prefix(id));
    assertThat(NodeNames.prefixOf("lock-0000000007")).isNull();
    assertThat(NodeNames.prefixOf("_c_short-lock-0000000007")).isNull();
  }
}

package io.lockstep.recipes.internal.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.locks.LockDecision;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Curator's read-write order, and its downgrade ties, decided without a server. */
@Timeout(10)
class ReadWriteDriverTest {
  private static final String W5 = "_c_1-__WRIT__0000000005";
  private static final String TIE5 = "_c_2-__READ__0000000005";
  private static final String R6 = "_c_3-__READ__0000000006";
  private static final String W7 = "_c_4-__WRIT__0000000007";
  private static final String R8 = "_c_5-__READ__0000000008";

  @Test
  void readersAndWriters_sortBySequence_andATieReaderSortsBeforeItsWriter() {
    List<String> sorted = QueueOrder.sort(List.of(R8, W7, R6, W5, TIE5), ReadWriteDriver.READ);

    assertThat(sorted).containsExactly(TIE5, W5, R6, W7, R8);
    assertThat(QueueOrder.sort(List.of(R8, W7, R6, W5, TIE5), ReadWriteDriver.WRITE))
        .isEqualTo(sorted);
  }

  @Test
  void reader_holdsWithNoWriterAhead_elseWatchesTheNearestWriterAhead() {
    List<String> queue = List.of(TIE5, W5, R6, W7, R8);

    assertThat(ReadWriteDriver.READ.decide(queue, TIE5)).isEqualTo(LockDecision.hold());
    assertThat(ReadWriteDriver.READ.decide(queue, R6)).isEqualTo(LockDecision.watch(W5));
    assertThat(ReadWriteDriver.READ.decide(queue, R8)).isEqualTo(LockDecision.watch(W7));
  }

  @Test
  void writer_holdsWhenFirst_elseWatchesItsImmediatePredecessor() {
    List<String> queue = List.of(W5, R6, W7);

    assertThat(ReadWriteDriver.WRITE.decide(queue, W5)).isEqualTo(LockDecision.hold());
    assertThat(ReadWriteDriver.WRITE.decide(queue, W7)).isEqualTo(LockDecision.watch(R6));
    assertThat(ReadWriteDriver.WRITE.newNodesSortLast()).isFalse();
    assertThat(ReadWriteDriver.READ.newNodesSortLast()).isFalse();
  }

  @Test
  void sequenceOfAWriteNode_isWhatADowngradeTiesTo() {
    assertThat(ReadWriteDriver.sequenceOf(W7)).isEqualTo("0000000007");
  }

  @Test
  void holdersAtHead_areTheReadersBeforeTheFirstWriter_andTheWriterBehindOnlyItsOwnTies() {
    String r4 = "_c_6-__READ__0000000004";
    assertThat(ReadWriteDriver.holdersAtHead(List.of())).isZero();
    assertThat(ReadWriteDriver.holdersAtHead(List.of(r4, R6, R8))).as("readers only").isEqualTo(3);
    assertThat(ReadWriteDriver.holdersAtHead(List.of(W5, R6, W7))).as("a writer first").isOne();
    assertThat(ReadWriteDriver.holdersAtHead(List.of(r4, W5, R6))).as("a reader ahead").isOne();
    assertThat(ReadWriteDriver.holdersAtHead(List.of(TIE5, W5, R6)))
        .as("a downgrade: the writer and its tied reader hold")
        .isEqualTo(2);
    assertThat(ReadWriteDriver.holdersAtHead(List.of(r4, TIE5, W5, R6)))
        .as("another reader ahead of the tie: the writer waits")
        .isEqualTo(2);
  }
}

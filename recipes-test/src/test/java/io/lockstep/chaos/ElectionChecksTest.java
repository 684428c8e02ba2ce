package io.lockstep.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The election checks of the chaos run: each reports the fault it is there to find. */
@Timeout(10)
class ElectionChecksTest {
  private static final String NODE = "/chaos-data/leader";

  @Test
  void distinctEpochs_areClean_andAnEpochElectedTwiceIsReported() {
    List<ElectionChecks.Elected> clean =
        List.of(
            new ElectionChecks.Elected(10, "client0/leader", 1),
            new ElectionChecks.Elected(20, "client1/leader", 2));
    assertThat(ElectionChecks.sharedEpochs(clean)).isEmpty();

    List<ElectionChecks.Elected> twice =
        List.of(clean.get(0), clean.get(1), new ElectionChecks.Elected(20, "client2/leader", 3));
    assertThat(ElectionChecks.sharedEpochs(twice))
        .singleElement()
        .asString()
        .contains("two leaderships with epoch 20", "client1/leader", "client2/leader");
  }

  @Test
  void writesCommittedDuringTheirLeadership_areClean() {
    List<ElectionChecks.Elected> elections =
        List.of(
            new ElectionChecks.Elected(10, "a", 1),
            new ElectionChecks.Elected(20, "b", 2),
            new ElectionChecks.Elected(30, "c", 3));
    List<ChaosRun.Commit> commits =
        List.of(
            new ChaosRun.Commit(NODE, 10, 11),
            new ChaosRun.Commit(NODE, 10, 19),
            new ChaosRun.Commit(NODE, 20, 25),
            new ChaosRun.Commit(NODE, 30, 40),
            new ChaosRun.Commit("/chaos-data/m0", 10, 50)); // another node: not the leader's

    assertThat(ElectionChecks.commitsAfterANewerEpoch(NODE, commits, elections)).isEmpty();
  }

  @Test
  void aWriteOfAnOldLeaderCommittedAfterANewerEpoch_isReported() {
    List<ElectionChecks.Elected> elections =
        List.of(new ElectionChecks.Elected(10, "a", 1), new ElectionChecks.Elected(20, "b", 2));
    // the new leader has not written yet: the commit order alone would not show it
    List<ChaosRun.Commit> commits = List.of(new ChaosRun.Commit(NODE, 10, 21));

    assertThat(ElectionChecks.commitsAfterANewerEpoch(NODE, commits, elections))
        .singleElement()
        .asString()
        .contains("epoch 10 committed at zxid 21, after epoch 20 was elected");
  }
}

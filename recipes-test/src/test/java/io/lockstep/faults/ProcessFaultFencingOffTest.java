package io.lockstep.faults;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The process fault suite's checkers can fail: with fencing off (the store accepts every token,
 * holders write to ZooKeeper without ownership checks), a holder frozen past its session writes
 * after the thaw with its stale token, and the run must report it, in the store's commit order and
 * in ZooKeeper's. About twenty seconds.
 *
 * <pre>
 * mvn -B -q verify -pl recipes-test -Dtest='ProcessFaultFencingOffTest' -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 */
@Tag("process-faults")
class ProcessFaultFencingOffTest {
  @Test
  @Timeout(120)
  void frozenHolder_withFencingOff_itsStaleWritesAreReported() throws Exception {
    RunReport report =
        RunReports.run(
            ShortRuns.fencingOff(RunReports.seed(), RunReports.directory("fencing-off")));

    assertThat(report.injected()).containsKey(FaultKind.FREEZE_HOLDER);
    assertThat(report.findings().figure("holds frozen past their session")).isPositive();
    assertThat(report.findings().violations("store order"))
        .as("stale writes the store accepted")
        .isNotEmpty()
        .allSatisfy(v -> assertThat(v.detail()).contains("stale write accepted"));
    assertThat(report.findings().violations("zookeeper order"))
        .as("stale writes ZooKeeper committed without ownership checks")
        .isNotEmpty();
  }
}

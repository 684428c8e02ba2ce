package io.lockstep.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The short run of the process fault suite, inside {@code mvn verify}: worker processes in child
 * JVMs loop acquire, fenced write, release on every recipe, while the test freezes them ({@code
 * kill -STOP}), kills them, expires their sessions on their clients, and freezes, restarts or (in
 * an ensemble) freezes the leader of the ZooKeeper servers, also in child JVMs. Fails on any safety
 * or liveness violation ({@link SafetyChecks}, {@link LivenessChecks}, {@link NodeChecks}), and
 * unless every fault kind landed where it aimed. About a minute and a half on two cores.
 *
 * <pre>
 * mvn -B -q verify -pl recipes-test -Dtest='ProcessFaultShortRunTest' -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 *
 * Replay a run's choices with {@code -Dprocess-faults.seed=S} (the seed is printed first). The
 * children's logs are under {@code recipes-test/target/process-faults/}.
 */
@Tag("process-faults")
class ProcessFaultShortRunTest {
  @Test
  @Timeout(180)
  void singleServer_everyProcessFault_andTheServerFrozenAndRestarted_noViolation()
      throws Exception {
    RunReport report =
        RunReports.run(
            ShortRuns.singleServer(RunReports.seed(), RunReports.directory("single-server")));

    assertClean(report);
    assertThat(report.injected().keySet())
        .as("fault kinds that landed")
        .containsAll(
            EnumSet.of(
                FaultKind.FREEZE_HOLDER,
                FaultKind.FREEZE_WAITER,
                FaultKind.FREEZE_LINGERER,
                FaultKind.FREEZE_LEADER,
                FaultKind.CLIENT_EXPIRY,
                FaultKind.KILL_HOLDER,
                FaultKind.FREEZE_SERVER,
                FaultKind.SERVER_RESTART));
    assertThat(report.findings().figure("holds frozen past their session"))
        .as("holds in progress when their process was frozen (the holder's, the leader's)")
        .isGreaterThanOrEqualTo(2);
    assertThat(
            report.findings().figure("holds whose client expired")
                + report.findings().figure("holds released before their client's expiry was heard"))
        .as("holds in progress when their client expired its session")
        .isPositive();
    assertThat(report.findings().figure("queued waiters frozen"))
        .as("the waiter's node was in the queue when it froze")
        .isEqualTo(1);
    assertThat(report.findings().figure("lingering places frozen"))
        .as("the lingering process still had its node when it froze")
        .isEqualTo(1);
  }

  @Test
  @Timeout(120)
  void threeServerEnsemble_leaderFrozen_noViolation() throws Exception {
    RunReport report =
        RunReports.run(ShortRuns.ensemble(RunReports.seed(), RunReports.directory("ensemble")));

    assertClean(report);
    assertThat(report.injected()).containsKey(FaultKind.FREEZE_ENSEMBLE_LEADER);
  }

  private static void assertClean(RunReport report) {
    Set<String> groups = Set.copyOf(report.findings().figures().keySet());
    assertThat(report.findings().violations())
        .as("violations (seed %d, logs %s)", report.seed(), report.logs())
        .isEmpty();
    assertThat(report.missed()).as("faults that found no target").isEmpty();
    assertThat(report.findings().figure("holds")).isPositive();
    assertThat(groups).isNotEmpty();
    assertThat(Files.isDirectory(report.logs())).isTrue();
  }
}

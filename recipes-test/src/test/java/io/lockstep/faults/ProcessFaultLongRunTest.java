package io.lockstep.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The long run of the process fault suite: every recipe and mode on a standalone server, then three
 * recipes on a three-server ensemble, under seeded random faults of every kind, for as many minutes
 * as asked; it writes its figures into {@code docs/fault-suite.md} and fails on any violation or if
 * a fault kind never landed. Skipped unless minutes are given:
 *
 * <pre>
 * mvn -B -pl recipes-test -Pprocess-faults verify -Dprocess-faults.minutes=N
 * mvn -B -pl recipes-test -Pprocess-faults verify -Dprocess-faults.minutes=N -Dprocess-faults.seed=S
 * </pre>
 */
@Tag("process-faults")
class ProcessFaultLongRunTest {
  @Test
  @Timeout(value = 24, unit = TimeUnit.HOURS)
  void everyRecipe_underEveryFault_forMinutes_noViolation() throws Exception {
    long minutes = Long.getLong("process-faults.minutes", 0);
    assumeTrue(minutes > 0, "the long run needs -Dprocess-faults.minutes (see -Pprocess-faults)");
    long seed = RunReports.seed();
    Path directory = RunReports.directory("long");
    Duration total = Duration.ofMinutes(minutes);

    List<RunReport> reports =
        assertTimeoutPreemptively(
            total.plusMinutes(20),
            () -> {
              List<RunReport> done = new ArrayList<>();
              for (ProcessFaultRun.Config config : LongRuns.configs(total, seed, directory)) {
                done.add(RunReports.run(config));
              }
              return done;
            });

    String page = System.getProperty("process-faults.page", "");
    if (!page.isBlank()) {
      FaultSuitePage.write(
          Path.of(page),
          reports,
          "mvn -B -pl recipes-test -Pprocess-faults verify -Dprocess-faults.minutes=" + minutes,
          LocalDate.now().toString());
    }
    Set<FaultKind> landed = EnumSet.noneOf(FaultKind.class);
    reports.forEach(r -> landed.addAll(r.injected().keySet()));
    for (RunReport report : reports) {
      assertThat(report.findings().violations())
          .as("violations of %s (seed %d, logs %s)", report.name(), report.seed(), report.logs())
          .isEmpty();
      assertThat(report.findings().figure("holds")).as("holds of %s", report.name()).isPositive();
    }
    assertThat(landed).as("fault kinds that landed").containsAll(EnumSet.allOf(FaultKind.class));
  }
}

package io.lockstep.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The worst day, as a test: all recipes (mutexes with and without local handoff, a leader election
 * with a participant per client, a semaphore of two leases) under server kills, session expiry,
 * partitions, slow links, closed clients, slow first connects and lost create answers, with
 * checkers that fail the run on a stale write accepted, an overlap of exclusive holders or leaders,
 * more leases than the semaphore has, a shared epoch, an acquire that outlives its budget, or a
 * node or watch left behind.
 *
 * <p>Inside {@code mvn -B verify} it runs for one minute. The long run: {@code mvn -B -pl
 * recipes-test -Pchaos verify -Dchaos.minutes=N}. Replay a schedule with {@code -Dchaos.seed=S}
 * (the seed is printed first); leave the client faults out with {@code -Dchaos.clientFaults=false}.
 */
class ChaosTest {
  @Test
  void allRecipesUnderFaults_keepExclusionAndFencing_andLeaveNothingBehind() throws Exception {
    long minutes = Long.getLong("chaos.minutes", 0);
    Duration duration = minutes > 0 ? Duration.ofMinutes(minutes) : Duration.ofSeconds(60);
    long seed = Long.getLong("chaos.seed", System.nanoTime());
    boolean clientFaults = Boolean.parseBoolean(System.getProperty("chaos.clientFaults", "true"));
    ChaosRun.Config config = new ChaosRun.Config(seed, duration, 6, 2, clientFaults);
    System.out.println("chaos seed " + seed + " (replay with -Dchaos.seed=" + seed + ")");

    Tally tally =
        assertTimeoutPreemptively(
            duration.plusMinutes(6),
            () -> {
              try (ChaosRun run = new ChaosRun(config)) {
                return run.run();
              }
            });

    List<String> lines = new ArrayList<>(tally.summary(config));
    tally.violations.stream().limit(20).forEach(v -> lines.add("chaos violation: " + v));
    lines.forEach(System.out::println);
    write(lines);
    assertThat(tally.violations).as("violations (seed %d)", seed).isEmpty();
    assertThat(tally.acquired.sum()).as("operations").isPositive();
    assertThat(tally.localHandoffAcquired.sum()).as("local-handoff operations").isPositive();
    assertThat(tally.elected.sum()).as("leaderships").isPositive();
    assertThat(tally.semLeases.sum()).as("semaphore leases").isPositive();
    assertThat(tally.faults()).as("faults injected").isPositive();
  }

  private static void write(List<String> lines) throws IOException {
    Path target = Path.of("target");
    if (Files.isDirectory(target)) {
      Files.write(target.resolve("chaos-summary.txt"), lines);
    }
  }
}

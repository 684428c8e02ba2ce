package io.lockstep.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How many drains each queue length of the handoff section gets. */
class SuiteSettingsTest {
  @Test
  void aShortQueue_getsMoreDrains_soThatEveryPointCoversAboutAsManyHandoffs() {
    SuiteSettings full = SuiteSettings.full();
    assertThat(full.handoffRepeats(100)).isEqualTo(15);
    assertThat(full.handoffRepeats(500)).isEqualTo(3);
    assertThat(full.handoffRepeats(2000)).as("never fewer than asked").isEqualTo(3);
  }

  @Test
  void theExtraDrains_areBoundedToFiveTimesTheRepeatsAsked() {
    SuiteSettings quick = SuiteSettings.quick();
    assertThat(quick.handoffRepeats(10)).isEqualTo(5);
    assertThat(quick.handoffRepeats(2000)).isEqualTo(1);
  }

  @Test
  void
      theSemaphoreElectionSection_hasMoreThreadsThanLeases_andEveryParticipantQueuedBeforeCounting() {
    for (SuiteSettings settings : java.util.List.of(SuiteSettings.quick(), SuiteSettings.full())) {
      assertThat(settings.semaphoreClients() * settings.semaphoreThreadsPerClient())
          .as("contention: more threads than leases")
          .isGreaterThan(settings.semaphoreMaxLeases());
      assertThat(settings.semaphoreClients()).as("several sessions").isGreaterThan(1);
      assertThat(settings.electionParticipants()).isGreaterThanOrEqualTo(2);
      assertThat(settings.electionWarmUp())
          .as("every participant has led once before counting")
          .isGreaterThanOrEqualTo(settings.electionParticipants());
      assertThat(settings.withCuratorWaitersMax(7).electionHandoffs())
          .isEqualTo(settings.electionHandoffs());
    }
    assertThat(SuiteSettings.full().electionHandoffs())
        .isGreaterThan(SuiteSettings.quick().electionHandoffs());
  }
}

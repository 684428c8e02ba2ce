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
}

package io.lockstep.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The zero-budget check itself: a grant passes, a refusal before the grace is reported. */
@Timeout(10)
class ZeroBudgetTryTest {
  private final AtomicInteger retries = new AtomicInteger();

  @Test
  void aGrant_isReturned_andNeedsNoRetry() throws Exception {
    ZeroBudgetTry.granted("granted", () -> true, this::retry);

    assertThat(ZeroBudgetTry.once("granted", () -> "hold", "hold"::equals)).isEqualTo("hold");
    assertThat(retries).hasValue(0);
  }

  @Test
  void aRefusalBeforeTheGrace_isReported_andNotRetried() {
    assertThatThrownBy(() -> ZeroBudgetTry.once("refused at once", () -> false, b -> b))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("refused at once: a free lock refused to a zero budget only once");
    assertThatThrownBy(() -> ZeroBudgetTry.granted("refused at once", () -> false, this::retry))
        .isInstanceOf(AssertionError.class);
    assertThat(retries).hasValue(0);
  }

  private boolean retry() {
    retries.incrementAndGet();
    return true;
  }
}

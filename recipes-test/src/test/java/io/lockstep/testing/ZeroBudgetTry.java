package io.lockstep.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The one try a zero budget gets, as tests of a free lock assert it. The promise is one try with
 * the grace (200 ms) from when it was sent, not a grant whatever the load: a quick server answers
 * within the grace, so a free lock is granted; on a loaded machine the answer may come later, and
 * an empty answer is then right, but only once the try had its whole grace ({@code
 * LateWakeBudgetTest} and {@code ComposedBudgetTest} assert the same of their own tries). Timers
 * round the grace down to whole milliseconds.
 */
public final class ZeroBudgetTry {
  /** The grace a zero budget's try has from when it was sent. */
  public static final long GRACE_MILLIS = 200;

  private ZeroBudgetTry() {}

  /**
   * Runs {@code zeroBudget}, a zero-budget try of a free lock, and returns its outcome: granted, or
   * else refused only once the whole grace had passed (asserted).
   *
   * @param what the try, for the assertion's message
   * @param granted whether an outcome is a grant
   */
  public static <T> T once(String what, Callable<T> zeroBudget, Predicate<? super T> granted)
      throws Exception {
    long start = System.nanoTime();
    T outcome = zeroBudget.call();
    if (!granted.test(outcome)) {
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
          .as("%s: a free lock refused to a zero budget only once its try had the grace", what)
          .isGreaterThanOrEqualTo(GRACE_MILLIS - 1);
    }
    return outcome;
  }

  /**
   * As {@link #once}, and if the try was refused (after its grace), takes the lock with {@code
   * withBudget} instead, which must grant it: the test goes on with a hold either way.
   */
  public static <T> T granted(
      String what, Callable<T> zeroBudget, Predicate<? super T> granted, Callable<T> withBudget)
      throws Exception {
    T outcome = once(what, zeroBudget, granted);
    if (granted.test(outcome)) {
      return outcome;
    }
    T again = withBudget.call();
    assertThat(granted.test(again)).as("%s: then granted with a budget", what).isTrue();
    return again;
  }

  /** As {@link #granted}, for a try that answers whether it was granted. */
  public static void granted(
      String what, Callable<Boolean> zeroBudget, Callable<Boolean> withBudget) throws Exception {
    granted(what, zeroBudget, Boolean::booleanValue, withBudget);
  }
}

package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@link Duration} forms of the timed methods are their {@code (long, TimeUnit)} forms with the
 * time in nanoseconds: the same answer to a negative time, a null argument named in the message,
 * and a duration too long to count in nanoseconds saturating instead of overflowing. Server-less:
 * the lock under them is a proxy that records the calls it receives.
 */
@Timeout(10)
class DurationOverloadsTest {
  /** The {@code acquire(long, TimeUnit)} calls the recording lock received, as nanoseconds. */
  private final List<Long> acquiredNanos = new CopyOnWriteArrayList<>();

  private final FencedLock lock = recordingLock();

  @Test
  void acquireDuration_isAcquireInNanoseconds() throws Exception {
    assertThat(lock.acquire(Duration.ofMillis(250))).isTrue();
    assertThat(lock.acquire(Duration.ZERO)).isTrue();

    assertThat(acquiredNanos).containsExactly(250_000_000L, 0L);
  }

  @Test
  void acquireDuration_tooLongForNanoseconds_saturates() throws Exception {
    lock.acquire(Duration.ofSeconds(Long.MAX_VALUE, 999_999_999));
    lock.acquire(Duration.ofDays(365L * 1_000));

    assertThat(acquiredNanos).containsExactly(Long.MAX_VALUE, Long.MAX_VALUE);
  }

  @Test
  void acquireDuration_refusesNullAndNegative_asTheLongFormRefusesANegativeTime() {
    assertThatThrownBy(() -> lock.acquire((Duration) null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("timeout");
    assertThatThrownBy(() -> lock.acquire(Duration.ofNanos(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeout must not be negative");

    assertThat(acquiredNanos).as("nothing reached the lock").isEmpty();
  }

  @Test
  void tryLockDuration_isTryLockInNanoseconds_andANegativeTimeMakesOneAttempt() throws Exception {
    LockView view = new LockView(lock, () -> {});

    assertThat(view.tryLock(Duration.ofMillis(3))).isTrue();
    assertThat(view.tryLock(Duration.ofSeconds(-5))).as("as tryLock(-5, SECONDS)").isTrue();
    assertThat(view.tryLock(Duration.ofSeconds(Long.MAX_VALUE))).isTrue();

    assertThat(acquiredNanos).containsExactly(3_000_000L, 0L, Long.MAX_VALUE);
  }

  @Test
  void tryLockDuration_refusesNull_namingTheArgument() {
    LockView view = new LockView(lock, () -> {});

    assertThatThrownBy(() -> view.tryLock(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("timeout");
    assertThat(acquiredNanos).isEmpty();
  }

  @Test
  void tryLockDuration_onAnInterruptedThread_throws_asTheLongFormDoes() {
    LockView view = new LockView(lock, () -> {});
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(() -> view.tryLock(Duration.ofSeconds(1)))
          .isInstanceOf(InterruptedException.class);
    } finally {
      Thread.interrupted();
    }
    assertThat(acquiredNanos).isEmpty();
  }

  /**
   * A {@link FencedLock} whose {@code acquire(long, TimeUnit)} records its budget and grants; its
   * default methods run as written; anything else is not expected here.
   */
  private FencedLock recordingLock() {
    InvocationHandler handler =
        (proxy, method, args) -> {
          if (method.isDefault()) {
            return InvocationHandler.invokeDefault(proxy, method, args);
          }
          if (isTimedAcquire(method)) {
            acquiredNanos.add(((TimeUnit) args[1]).toNanos((Long) args[0]));
            return true;
          }
          if (method.getName().equals("toString")) {
            return "RecordingLock";
          }
          throw new UnsupportedOperationException(method.toString());
        };
    return (FencedLock)
        Proxy.newProxyInstance(
            FencedLock.class.getClassLoader(), new Class<?>[] {FencedLock.class}, handler);
  }

  private static boolean isTimedAcquire(Method method) {
    return method.getName().equals("acquire")
        && List.of(method.getParameterTypes()).equals(List.of(long.class, TimeUnit.class));
  }
}

package io.lockstep.recipes.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.support.PropertySourcesPlaceholderConfigurer;
import org.springframework.core.env.MapPropertySource;

/**
 * The values of {@link Locked} annotations are checked as the bean is created: a bad one fails the
 * context's startup with a message naming the method and the attribute, before any call and without
 * a server (the lock source is looked up at the first call).
 */
@Timeout(30)
class LockedValidationTest {
  static class NegativeTtl {
    @Locked(key = "'job'", ttl = "-PT1S")
    public void run() {}
  }

  static class ZeroTtl {
    @Locked(key = "'job'", ttl = "PT0S")
    public void run() {}
  }

  static class UnparsableTtl {
    @Locked(key = "'job'", ttl = "ten minutes")
    public void run() {}
  }

  static class NegativeHoldAtLeast {
    @Locked(key = "'job'", holdAtLeast = "-PT1S")
    public void run() {}
  }

  static class HoldAtLeastBeyondTtl {
    @Locked(key = "'job'", ttl = "PT10S", holdAtLeast = "PT1M")
    public void run() {}
  }

  static class HoldAtLeastOnly {
    @Locked(key = "'job'", holdAtLeast = "PT1M")
    public void run() {}
  }

  static class RenewWithoutTtl {
    @Locked(key = "'job'", renew = true)
    public void run() {}
  }

  static class SkipReturningInt {
    @Locked(key = "'job'", whenBusy = Locked.WhenBusy.SKIP)
    public int run() {
      return 1;
    }
  }

  static class PlaceholderTtl {
    @Locked(key = "'job'", ttl = "${jobs.ttl}")
    public void run() {}
  }

  static class BadFence {
    @Locked(key = "'order-' + #orderId", fence = "'order-' +")
    public void run(String orderId) {}
  }

  static class BadKey {
    @Locked(key = "#orderId.")
    public void run(String orderId) {}
  }

  static class BadWait {
    @Locked(key = "#p0", waitFor = "one second")
    public void run(String orderId) {}
  }

  static class Later {
    @Locked(key = "#p0")
    public CompletableFuture<String> run(String orderId) {
      return CompletableFuture.completedFuture(orderId);
    }
  }

  static class UnresolvableTtl {
    @Locked(key = "'job'", ttl = "${jobs.missing-ttl}")
    public void run() {}
  }

  /** A method a class-based proxy cannot intercept: it would run without the lock. */
  static class FinalMethod {
    @Locked(key = "'job'", whenBusy = Locked.WhenBusy.SKIP)
    public final void run() {}
  }

  /** Good values, every attribute. */
  static class Fine {
    @Locked(
        key = "'job'",
        whenBusy = Locked.WhenBusy.SKIP,
        ttl = "PT1M",
        renew = true,
        holdAtLeast = "PT1M")
    public Optional<String> run() {
      return Optional.of("ran");
    }
  }

  @Test
  void badDurations_failStartup_namingTheMethodAndTheAttribute() {
    assertRefused(NegativeTtl.class, Map.of(), "NegativeTtl.run", "ttl \"-PT1S\"", "positive");
    assertRefused(ZeroTtl.class, Map.of(), "ZeroTtl.run", "ttl \"PT0S\"", "positive");
    assertRefused(UnparsableTtl.class, Map.of(), "UnparsableTtl.run", "ttl \"ten minutes\"");
    assertRefused(
        NegativeHoldAtLeast.class,
        Map.of(),
        "NegativeHoldAtLeast.run",
        "holdAtLeast \"-PT1S\"",
        "not negative");
    assertRefused(BadWait.class, Map.of(), "BadWait.run", "waitFor \"one second\"");
    assertRefused(
        PlaceholderTtl.class,
        Map.of("jobs.ttl", "soon"),
        "PlaceholderTtl.run",
        "ttl \"${jobs.ttl}\" (\"soon\")");
  }

  @Test
  void holdAtLeastBeyondTheTtl_orTheDefaultTtl_failsStartup() {
    assertRefused(
        HoldAtLeastBeyondTtl.class,
        Map.of(),
        "HoldAtLeastBeyondTtl.run",
        "holdAtLeast (PT1M) is longer than ttl (PT10S)");
    assertRefused(
        HoldAtLeastOnly.class,
        Map.of(LockedBeanPostProcessor.DEFAULT_TTL_PROPERTY, "30s"),
        "HoldAtLeastOnly.run",
        "holdAtLeast (PT1M) is longer than the default ttl (PT30S, lockstep.locked.default-ttl)");
    try (AnnotationConfigApplicationContext context = start(HoldAtLeastOnly.class, Map.of())) {
      assertThat(context.getBean(LockedBeanPostProcessor.class).getDefaultTtl()).isNull();
    }
  }

  @Test
  void renewWithoutTtl_skipOnAPrimitive_aBadKey_orAsyncWork_failStartup() {
    assertRefused(RenewWithoutTtl.class, Map.of(), "RenewWithoutTtl.run", "renew = true needs");
    assertRefused(
        SkipReturningInt.class, Map.of(), "SkipReturningInt.run", "whenBusy = SKIP", "int");
    assertRefused(BadKey.class, Map.of(), "BadKey.run", "\"#orderId.\"");
    assertRefused(BadFence.class, Map.of(), "BadFence.run", "fence", "is no SpEL expression");
    assertRefused(Later.class, Map.of(), "Later.run", "asynchronous work is not supported");
  }

  @Test
  void anUnresolvablePlaceholder_failsStartup_namingTheMethodAndTheAttribute() {
    Throwable thrown =
        catchThrowable(
            () -> {
              AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
              // strict, as Spring Boot's: an unresolvable placeholder throws
              context.registerBean(PropertySourcesPlaceholderConfigurer.class);
              context.register(LockedBeanPostProcessor.class, UnresolvableTtl.class);
              try {
                context.refresh();
              } finally {
                context.close();
              }
            });
    assertThat(thrown).isInstanceOf(BeanCreationException.class);
    assertThat(thrown)
        .hasStackTraceContaining(
            "@Locked method UnresolvableTtl.run: ttl \"${jobs.missing-ttl}\" cannot be resolved");
  }

  @Test
  void aFinalMethodOfAClassBasedProxy_failsStartup_ratherThanRunningWithoutTheLock() {
    assertRefused(FinalMethod.class, Map.of(), "FinalMethod.run", "is final");
  }

  @Test
  void theDefaultTtlProperty_isReadInEitherForm_andABadOneFailsStartupNamingIt() {
    try (AnnotationConfigApplicationContext context =
        start(Fine.class, Map.of(LockedBeanPostProcessor.DEFAULT_TTL_PROPERTY, "PT2M"))) {
      assertThat(context.getBean(LockedBeanPostProcessor.class).getDefaultTtl())
          .isEqualTo(Duration.ofMinutes(2));
    }
    try (AnnotationConfigApplicationContext context =
        start(Fine.class, Map.of(LockedBeanPostProcessor.DEFAULT_TTL_PROPERTY, "90s"))) {
      assertThat(context.getBean(LockedBeanPostProcessor.class).getDefaultTtl())
          .isEqualTo(Duration.ofSeconds(90));
    }
    assertThatThrownBy(
            () -> start(Fine.class, Map.of(LockedBeanPostProcessor.DEFAULT_TTL_PROPERTY, "-5s")))
        .hasStackTraceContaining("lockstep.locked.default-ttl \"-5s\" is no positive duration");
  }

  private static void assertRefused(
      Class<?> bean, Map<String, Object> properties, String... fragments) {
    Throwable thrown = catchThrowable(() -> start(bean, properties));
    assertThat(thrown).as(bean.getSimpleName()).isInstanceOf(BeanCreationException.class);
    Throwable refusal = thrown;
    while (refusal != null
        && !(refusal instanceof IllegalStateException
            && String.valueOf(refusal.getMessage()).startsWith("@Locked method "))) {
      refusal = refusal.getCause();
    }
    assertThat(refusal).as(bean.getSimpleName() + ": the refusal in " + thrown).isNotNull();
    assertThat(refusal.getMessage()).as(bean.getSimpleName()).contains(fragments);
  }

  private static AnnotationConfigApplicationContext start(
      Class<?> bean, Map<String, Object> properties) {
    AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
    context
        .getEnvironment()
        .getPropertySources()
        .addFirst(new MapPropertySource("test", properties));
    context.register(LockedBeanPostProcessor.class, bean);
    try {
      context.refresh();
    } catch (RuntimeException e) {
      context.close();
      throw e;
    }
    return context;
  }
}

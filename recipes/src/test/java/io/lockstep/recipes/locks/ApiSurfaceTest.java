package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Only the API is public in the packages the module exports; the engine lives in packages under
 * {@code io.lockstep.recipes.internal}, which it does not (see {@link ModuleDescriptorTest}). This
 * test fails the build when a type of an exported package becomes reachable by users without being
 * added to the API on purpose, or when a package appears that is neither exported nor internal, and
 * when a method of the API takes a time without a {@link Duration} form beside it.
 */
@Timeout(10)
class ApiSurfaceTest {
  static final Set<String> EXPORTED =
      Set.of(
          "io.lockstep.recipes.locks",
          "io.lockstep.recipes.fence",
          "io.lockstep.recipes.fence.http",
          "io.lockstep.recipes.leader",
          "io.lockstep.recipes.leader.compat",
          "io.lockstep.recipes.spring",
          "io.lockstep.recipes.micrometer",
          "io.lockstep.recipes.reactor",
          "io.lockstep.recipes.boot");

  static final String INTERNAL = "io.lockstep.recipes.internal.";

  private static final Set<String> API =
      Set.of(
          "AcquireOutcome",
          "ClientTime",
          "CountingSemaphore",
          "CountingSemaphore$Builder",
          "EnableLockstepLocking",
          "FencedLock",
          "FencingClientInterceptor",
          "FencingExchangeFilter",
          "FencingFilter",
          "FencingFilter$Builder",
          "FencingHeaders",
          "JdbcFence",
          "KeyLayout",
          "KeyedLocks",
          "KeyedLocks$Builder",
          "LeaderElection",
          "LeaderElection$Builder",
          "LeaderLatch",
          "LeaderLatch$CloseMode",
          "LeaderLatch$State",
          "LeaderSelector",
          "LeaderLayout",
          "Leadership",
          "LeadershipListener",
          "LockDecision",
          "LockAttempt",
          "LocalHandoff",
          "LockDriver",
          "LockException",
          "LockHold",
          "LockTimeoutException",
          "LockInspector",
          "LockInspector$Entry",
          "LockInspector$Mode",
          "LockInspector$Snapshot",
          "LockInspector$Tree",
          "LocksEndpoint",
          "LocksEndpoint$LockReport",
          "LocksEndpoint$LocksReport",
          "LocksEndpoint$NodeReport",
          "LocksEndpoint$RootReport",
          "LocksEndpointAutoConfiguration",
          "LockObserver",
          "LockObservers",
          "LockOwnershipLostException",
          "LockUnreachableException",
          "LockState",
          "LockStateChange",
          "LockStateListener",
          "LockView",
          "LockstepLock",
          "LockstepHealthAutoConfiguration",
          "LockstepHealthIndicator",
          "LockstepInspectorProperties",
          "Locked",
          "LockedBeanPostProcessor",
          "LockedCall",
          "Locked$WhenBusy",
          "LockedSkips",
          "LockedSkips$Listener",
          "LockstepLockRegistry",
          "LockstepLockedAutoConfiguration",
          "LockstepMetrics",
          "LockstepMetrics$Builder",
          "LockstepMetricsAutoConfiguration",
          "LockstepObservationAutoConfiguration",
          "LockstepObservations",
          "LockstepRegistryAutoConfiguration",
          "LockstepRegistryExpiry",
          "LockstepRegistryProperties",
          "LockstepZookeeperAutoConfiguration",
          "LockstepZookeeperProperties",
          "LockstepZookeeperProperties$Retry",
          "MultiMutex",
          "MultiMutex$Builder",
          "NonReentrantMutex",
          "NonReentrantMutex$Builder",
          "Participant",
          "ReactiveLocks",
          "ReadWriteMutex",
          "ReadWriteMutex$Builder",
          "ReadWriteMutex$ReadLock",
          "ReadWriteMutex$WriteLock",
          "ReentrantMutex",
          "ReentrantMutex$Builder",
          "SemaphoreMutex",
          "SemaphoreMutex$Builder",
          "StaleFencingTokenException");

  @Test
  void thePublicTypesOfTheExportedPackages_areExactlyTheApi() throws Exception {
    Set<String> found = new TreeSet<>();
    for (Class<?> type : classes()) {
      if (EXPORTED.contains(type.getPackageName()) && isReachable(type)) {
        found.add(type.getName().substring(type.getPackageName().length() + 1));
      }
    }
    assertThat(found).containsExactlyInAnyOrderElementsOf(API);
  }

  /** Methods of the API whose {@code long} parameter is a time in milliseconds, without a unit. */
  private static final Set<String> MILLIS = Set.of("LockstepLockRegistry.expireUnusedOlderThan");

  /** Methods of the API whose {@code long} parameter is no time (a fencing token). */
  private static final Set<String> NOT_A_TIME =
      Set.of(
          "LockObserver.attemptEnded",
          "LockObserver.stateChanged",
          "LockObserver.released",
          "JdbcFence.admit",
          "FencingHeaders.set");

  /**
   * Every public method of the API that takes a time as {@code (long, TimeUnit)} or as a bare
   * {@code long} of milliseconds has a {@link Duration} form beside it: the same name and
   * parameters, with one {@code Duration} in place of the time. A new {@code long} parameter must
   * be placed in {@link #MILLIS} or {@link #NOT_A_TIME} on purpose.
   */
  @Test
  void everyTimedMethodOfTheApi_hasADurationForm() throws Exception {
    List<String> missing = new ArrayList<>();
    List<String> unclassified = new ArrayList<>();
    for (Class<?> type : classes()) {
      if (!EXPORTED.contains(type.getPackageName()) || !isReachable(type)) {
        continue;
      }
      for (Method method : ownMethods(type)) {
        if (!Modifier.isPublic(method.getModifiers()) || method.isSynthetic()) {
          continue;
        }
        List<Class<?>> params = Arrays.asList(method.getParameterTypes());
        int time = params.indexOf(long.class);
        if (time < 0) {
          continue;
        }
        String name = type.getSimpleName() + "." + method.getName();
        boolean withUnit = time + 1 < params.size() && params.get(time + 1) == TimeUnit.class;
        if (!withUnit && NOT_A_TIME.contains(name)) {
          continue;
        }
        if (!withUnit && !MILLIS.contains(name)) {
          unclassified.add(method.toString());
          continue;
        }
        List<Class<?>> durationForm = new ArrayList<>(params);
        if (withUnit) {
          durationForm.remove(time + 1);
        }
        durationForm.set(time, Duration.class);
        try {
          type.getMethod(method.getName(), durationForm.toArray(new Class<?>[0]));
        } catch (NoSuchMethodException e) {
          missing.add(method.toString());
        }
      }
    }
    assertThat(missing).as("timed methods without a Duration form").isEmpty();
    assertThat(unclassified).as("long parameters neither in MILLIS nor in NOT_A_TIME").isEmpty();
  }

  /**
   * The seven recipes, and the mutex on Curator's semaphore layout: one shape (see
   * docs/migration.md, "One shape for every recipe").
   */
  private static final List<Class<?>> RECIPES =
      List.of(
          ReentrantMutex.class,
          NonReentrantMutex.class,
          SemaphoreMutex.class,
          ReadWriteMutex.class,
          MultiMutex.class,
          KeyedLocks.class,
          CountingSemaphore.class,
          io.lockstep.recipes.leader.LeaderElection.class);

  @Test
  void everyRecipe_hasABuilder_andIsAutoCloseable() {
    for (Class<?> recipe : RECIPES) {
      assertThat(AutoCloseable.class.isAssignableFrom(recipe))
          .as("%s is AutoCloseable", recipe.getSimpleName())
          .isTrue();
      assertThat(Arrays.stream(recipe.getMethods()))
          .as("%s has a static builder(...)", recipe.getSimpleName())
          .anyMatch(
              method ->
                  method.getName().equals("builder")
                      && Modifier.isStatic(method.getModifiers())
                      && method.getReturnType().getSimpleName().equals("Builder"));
    }
  }

  @Test
  void everyRecipeThatHandsOutHolds_namesTheTryForm_tryHold() {
    for (Class<?> recipe :
        List.of(
            FencedLock.class,
            CountingSemaphore.class,
            io.lockstep.recipes.leader.LeaderElection.class)) {
      assertThat(Arrays.stream(recipe.getMethods()))
          .as("%s.tryHold(Duration)", recipe.getSimpleName())
          .anyMatch(
              method ->
                  method.getName().equals("tryHold")
                      && Arrays.equals(
                          method.getParameterTypes(), new Class<?>[] {Duration.class}));
    }
  }

  @Test
  void everyOtherPackage_isInternal_andTheEngineIsThere() throws Exception {
    Set<String> packages = new TreeSet<>();
    for (Class<?> type : classes()) {
      packages.add(type.getPackageName());
    }
    assertThat(packages).containsAll(EXPORTED);
    assertThat(packages)
        .filteredOn(name -> !EXPORTED.contains(name))
        .isNotEmpty()
        .allMatch(name -> name.startsWith(INTERNAL));
  }

  /** Every class of the library, from its class files. */
  static Set<Class<?>> classes() throws IOException, URISyntaxException {
    Path root = classesRoot();
    Set<Class<?>> classes = new java.util.HashSet<>();
    try (Stream<Path> files = Files.walk(root)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        String name = root.relativize(file).toString();
        if (!name.endsWith(".class") || name.endsWith("-info.class")) {
          continue;
        }
        String className = name.replace('/', '.').replace(".class", "");
        try {
          classes.add(Class.forName(className, false, ApiSurfaceTest.class.getClassLoader()));
        } catch (ClassNotFoundException e) {
          throw new IllegalStateException(e);
        }
      }
    }
    return classes;
  }

  static Path classesRoot() throws URISyntaxException {
    return Path.of(LockDriver.class.getProtectionDomain().getCodeSource().getLocation().toURI());
  }

  /**
   * The methods {@code type} declares, and those of its package-private superclasses in the
   * library, which Javadoc documents as the type's own (as {@code CountingSemaphore}'s Curator
   * forms or a builder's shared options).
   */
  private static List<Method> ownMethods(Class<?> type) {
    List<Method> methods = new ArrayList<>(Arrays.asList(type.getDeclaredMethods()));
    for (Class<?> hidden = type.getSuperclass();
        hidden != null
            && !Modifier.isPublic(hidden.getModifiers())
            && hidden.getPackageName().equals(type.getPackageName());
        hidden = hidden.getSuperclass()) {
      methods.addAll(Arrays.asList(hidden.getDeclaredMethods()));
    }
    return methods;
  }

  /** Public, and every enclosing type public too. */
  private static boolean isReachable(Class<?> type) {
    for (Class<?> t = type; t != null; t = t.getEnclosingClass()) {
      if (!Modifier.isPublic(t.getModifiers()) || t.isAnonymousClass() || t.isLocalClass()) {
        return false;
      }
    }
    return true;
  }
}

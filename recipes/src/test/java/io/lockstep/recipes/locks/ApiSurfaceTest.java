package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Only the API is public: the engine's types are package-private. This test fails the build when a
 * type of the library becomes reachable by users without being added to the API on purpose.
 */
@Timeout(10)
class ApiSurfaceTest {
  private static final Set<String> API =
      Set.of(
          "AcquireOutcome",
          "FencedLock",
          "KeyedLocks",
          "LockDecision",
          "LockAttempt",
          "LocalHandoff",
          "LockDriver",
          "LockException",
          "LockHold",
          "LockInspector",
          "LockInspector$Entry",
          "LockInspector$Mode",
          "LockInspector$Snapshot",
          "LockObserver",
          "LockObservers",
          "LockOwnershipLostException",
          "LockState",
          "LockStateChange",
          "LockStateListener",
          "LockView",
          "LockstepLockRegistry",
          "LockstepMetrics",
          "LockstepMetrics$Builder",
          "MultiMutex",
          "MultiMutex$Builder",
          "NonReentrantMutex",
          "NonReentrantMutex$Builder",
          "ReadWriteMutex",
          "ReadWriteMutex$ReadLock",
          "ReadWriteMutex$WriteLock",
          "ReentrantMutex",
          "ReentrantMutex$Builder");

  @Test
  void thePublicTypesOfTheLibrary_areExactlyTheApi() throws Exception {
    assertThat(publicTypes()).containsExactlyInAnyOrderElementsOf(API);
  }

  private static Set<String> publicTypes() throws IOException, URISyntaxException {
    Path classes =
        Path.of(LockDriver.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Set<String> found = new TreeSet<>();
    try (Stream<Path> files = Files.walk(classes)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        String name = classes.relativize(file).toString();
        if (!name.endsWith(".class") || name.endsWith("package-info.class")) {
          continue;
        }
        String className = name.replace('/', '.').replace(".class", "");
        Class<?> type;
        try {
          type = Class.forName(className, false, ApiSurfaceTest.class.getClassLoader());
        } catch (ClassNotFoundException e) {
          throw new IllegalStateException(e);
        }
        if (isReachable(type)) {
          found.add(className.substring(className.lastIndexOf('.') + 1));
        }
      }
    }
    return found;
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

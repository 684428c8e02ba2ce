package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.testing.ZooKeeperExtension;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A user without Spring or Micrometer: the core's classes, loaded where neither can be seen, take
 * and release a lock on a real server and never ask for a class of either.
 */
@Timeout(60)
class WithoutIntegrationsTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  private static final List<String> OPTIONAL =
      List.of("org.springframework.", "io.micrometer.", "reactor.", "org.reactivestreams.");

  /** Sees everything the test sees but Spring and Micrometer, and notes who asked for them. */
  private static final class WithoutOptional extends ClassLoader {
    final List<String> refused = new CopyOnWriteArrayList<>();

    WithoutOptional(ClassLoader parent) {
      super(parent);
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (OPTIONAL.stream().anyMatch(name::startsWith)) {
        refused.add(name);
        throw new ClassNotFoundException(name + " is not on this class path");
      }
      return super.loadClass(name, resolve);
    }
  }

  /**
   * Loads Lockstep's own classes itself, from the library's jar or classes; the rest from above.
   */
  private static final class LibraryFirst extends URLClassLoader {
    LibraryFirst(URL library, ClassLoader parent) {
      super(new URL[] {library}, parent);
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (!name.startsWith("io.lockstep.recipes.")) {
        return super.loadClass(name, resolve);
      }
      synchronized (getClassLoadingLock(name)) {
        Class<?> loaded = findLoadedClass(name);
        if (loaded == null) {
          loaded = findClass(name);
        }
        if (resolve) {
          resolveClass(loaded);
        }
        return loaded;
      }
    }
  }

  @Test
  void aReentrantMutex_worksWhereNeitherSpringNorMicrometerCanBeSeen() throws Exception {
    URL library = ReentrantMutex.class.getProtectionDomain().getCodeSource().getLocation();
    WithoutOptional withoutOptional = new WithoutOptional(getClass().getClassLoader());
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    try (LibraryFirst loader = new LibraryFirst(library, withoutOptional)) {
      Class<?> mutexClass = loader.loadClass(ReentrantMutex.class.getName());
      assertThat(mutexClass).isNotSameAs(ReentrantMutex.class); // really loaded there
      Object mutex =
          mutexClass.getConstructor(CuratorFramework.class, String.class).newInstance(client, path);
      mutexClass.getMethod("acquire").invoke(mutex);
      long token = (long) mutexClass.getMethod("fencingToken").invoke(mutex);
      mutexClass.getMethod("release").invoke(mutex);

      assertThat(token).isPositive();
      assertThat((Iterable<?>) mutexClass.getMethod("getParticipantNodes").invoke(mutex))
          .as("released: no node left")
          .isEmpty();
    }
    assertThat(withoutOptional.refused).as("classes of Spring or Micrometer asked for").isEmpty();
  }

  /** The check can fail: the adapters do need what they adapt. */
  @Test
  void theAdapters_cannotLoadWhereTheirFrameworkCannotBeSeen() throws Exception {
    URL library = ReentrantMutex.class.getProtectionDomain().getCodeSource().getLocation();
    WithoutOptional withoutOptional = new WithoutOptional(getClass().getClassLoader());
    try (LibraryFirst loader = new LibraryFirst(library, withoutOptional)) {
      assertThatThrownBy(
              () -> Class.forName("io.lockstep.recipes.spring.LockstepLockRegistry", true, loader))
          .isInstanceOf(NoClassDefFoundError.class);
      assertThatThrownBy(
              () -> Class.forName("io.lockstep.recipes.micrometer.LockstepMetrics", true, loader))
          .isInstanceOf(NoClassDefFoundError.class);
    }
    assertThat(withoutOptional.refused).isNotEmpty();
  }
}

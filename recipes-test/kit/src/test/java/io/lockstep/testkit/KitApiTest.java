package io.lockstep.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The kit's API is what a user needs and no more: the extension, its faults and a fault in force.
 * Everything else is package-private or in {@code io.lockstep.testkit.internal}, which the kit's
 * Javadoc leaves out.
 */
@Timeout(30)
class KitApiTest {
  @Test
  void thePublicTypesOfTheKitsPackage_areExactlyTheApi() throws Exception {
    Path classes =
        Path.of(LockstepZooKeeper.class.getProtectionDomain().getCodeSource().getLocation().toURI())
            .resolve("io/lockstep/testkit");
    Set<String> found = new TreeSet<>();
    try (Stream<Path> files = Files.list(classes)) {
      for (Path file : files.filter(p -> p.toString().endsWith(".class")).toList()) {
        String name = file.getFileName().toString().replace(".class", "");
        Class<?> type = Class.forName("io.lockstep.testkit." + name);
        if (Modifier.isPublic(type.getModifiers()) && !name.contains("$")) {
          found.add(name);
        }
      }
    }

    assertThat(found).containsExactly("Fault", "LockFaults", "LockstepZooKeeper");
  }
}

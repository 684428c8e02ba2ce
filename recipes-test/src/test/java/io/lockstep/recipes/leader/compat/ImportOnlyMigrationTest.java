package io.lockstep.recipes.leader.compat;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A user's code on Curator's {@code LeaderLatch} and {@code LeaderSelector} (with {@code
 * LeaderSelectorListenerAdapter}), and its tests, moved to the compat classes by changing two
 * imports: {@code project/curator} is the code as written for Curator, {@code project/lockstep} the
 * same code after the migration, and both run their own tests ({@code JobInstanceTest}) in this
 * build. This test checks that the two copies differ in nothing else.
 */
@Timeout(30)
class ImportOnlyMigrationTest {
  private static final Path PROJECT =
      Path.of("src/test/java/io/lockstep/recipes/leader/compat/project");

  @ParameterizedTest
  @ValueSource(strings = {"JobInstance.java", "JobInstanceTest.java"})
  void theMigratedCopy_differsOnlyInTheImportsOfLeaderLatchAndLeaderSelector(String file)
      throws IOException {
    Source before = Source.read(PROJECT.resolve("curator").resolve(file));
    Source after = Source.read(PROJECT.resolve("lockstep").resolve(file));

    assertThat(after.body).isEqualTo(before.body);
    Set<String> migrated = new TreeSet<>(before.imports);
    if (migrated.remove("org.apache.curator.framework.recipes.leader.LeaderLatch")) {
      migrated.add("io.lockstep.recipes.leader.compat.LeaderLatch");
    }
    if (migrated.remove("org.apache.curator.framework.recipes.leader.LeaderSelector")) {
      migrated.add("io.lockstep.recipes.leader.compat.LeaderSelector");
    }
    assertThat(after.imports).isEqualTo(migrated);
  }

  @ParameterizedTest
  @ValueSource(strings = {"JobInstance.java"})
  void theCodeUsesCuratorsListenerInterfacesAndAdapter_unchanged(String file) throws IOException {
    Source after = Source.read(PROJECT.resolve("lockstep").resolve(file));

    assertThat(after.imports)
        .contains(
            "io.lockstep.recipes.leader.compat.LeaderLatch",
            "io.lockstep.recipes.leader.compat.LeaderSelector",
            "org.apache.curator.framework.recipes.leader.LeaderLatchListener",
            "org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter",
            "org.apache.curator.framework.recipes.leader.Participant");
  }

  /** A source file: its imports, and every other line but the package line. */
  private record Source(Set<String> imports, List<String> body) {
    static Source read(Path file) throws IOException {
      Set<String> imports = new TreeSet<>();
      List<String> body =
          Files.readAllLines(file).stream()
              .filter(line -> !line.startsWith("package "))
              .filter(
                  line -> {
                    if (line.startsWith("import ")) {
                      imports.add(line.substring("import ".length(), line.length() - 1));
                      return false;
                    }
                    return true;
                  })
              .filter(line -> !line.isBlank())
              .toList();
      return new Source(imports, body);
    }
  }
}

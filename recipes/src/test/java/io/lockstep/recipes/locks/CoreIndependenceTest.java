package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The core never refers to the optional integrations: no compiled class of {@code
 * io.lockstep.recipes.locks}, of the fence ({@code io.lockstep.recipes.fence}, whose HTTP part
 * {@code fence.http} is an adapter) or of the engine ({@code io.lockstep.recipes.internal}) names a
 * type of Spring (Spring Boot included) or Micrometer, so a user without them loads none of their
 * classes (and needs none of their jars). The constant pool of a class file holds every type it
 * refers to as a UTF-8 internal name ({@code org/springframework/...}), which is what this test
 * looks for.
 */
@Timeout(10)
class CoreIndependenceTest {
  private static final List<String> OPTIONAL =
      List.of("org/springframework/", "io/micrometer/", "reactor/", "org/reactivestreams/");

  @Test
  void theCoreClasses_referToNeitherSpringNorMicrometer() throws Exception {
    List<Path> core = coreClassFiles();
    List<String> references = new ArrayList<>();
    for (Path file : core) {
      String bytes = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
      for (String prefix : OPTIONAL) {
        if (bytes.contains(prefix) || bytes.contains(prefix.replace('/', '.'))) {
          references.add(file.getFileName() + " refers to " + prefix);
        }
      }
    }
    assertThat(core).as("the core's class files").hasSizeGreaterThan(40);
    assertThat(references).isEmpty();
  }

  /** The check can fail: the adapters' own class files do refer to what they adapt. */
  @Test
  void theAdapters_doReferToWhatTheyAdapt() throws Exception {
    Path classes = classesRoot();
    String registry =
        new String(
            Files.readAllBytes(
                classes.resolve("io/lockstep/recipes/spring/LockstepLockRegistry.class")),
            StandardCharsets.ISO_8859_1);
    String metrics =
        new String(
            Files.readAllBytes(
                classes.resolve("io/lockstep/recipes/micrometer/LockstepMetrics.class")),
            StandardCharsets.ISO_8859_1);
    String boot =
        new String(
            Files.readAllBytes(
                classes.resolve(
                    "io/lockstep/recipes/boot/LockstepZookeeperAutoConfiguration.class")),
            StandardCharsets.ISO_8859_1);
    assertThat(registry).contains("org/springframework/");
    assertThat(metrics).contains("io/micrometer/");
    String reactive =
        new String(
            Files.readAllBytes(classes.resolve("io/lockstep/recipes/reactor/ReactiveLocks.class")),
            StandardCharsets.ISO_8859_1);
    assertThat(reactive).contains("reactor/core/");
    assertThat(boot).contains("org/springframework/boot/");
    String http =
        new String(
            Files.readAllBytes(
                classes.resolve("io/lockstep/recipes/fence/http/FencingFilter.class")),
            StandardCharsets.ISO_8859_1);
    assertThat(http).contains("org/springframework/web/", "jakarta/servlet/");
  }

  /** The class files of the locks, the fence and the engine: everything but the adapters. */
  private static List<Path> coreClassFiles() throws IOException, URISyntaxException {
    Path root = classesRoot().resolve("io/lockstep/recipes");
    try (Stream<Path> files = Files.walk(root)) {
      return files
          .filter(f -> f.toString().endsWith(".class"))
          .filter(f -> !root.relativize(f).startsWith("spring"))
          .filter(f -> !root.relativize(f).startsWith("micrometer"))
          .filter(f -> !root.relativize(f).startsWith("reactor"))
          .filter(f -> !root.relativize(f).startsWith("boot"))
          .filter(f -> !root.relativize(f).startsWith(Path.of("fence", "http")))
          .sorted()
          .toList();
    }
  }

  private static Path classesRoot() throws URISyntaxException {
    return Path.of(LockDriver.class.getProtectionDomain().getCodeSource().getLocation().toURI());
  }
}

package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The module descriptor ({@code src/main/module-info/module-info.java}, put into the jar at {@code
 * package} as {@code META-INF/versions/9/module-info.class}) compiles against the library's classes
 * and the modules it names, exports exactly the API packages, and needs Spring Integration,
 * Micrometer (its meters, observations and commons) and Spring Boot only statically, so the core
 * works without them on a module path as on the class path.
 */
@Timeout(60)
class ModuleDescriptorTest {
  private static final Path SOURCE = Path.of("src/main/module-info/module-info.java");

  /** The jars the descriptor names, by the start of their file names. */
  private static final List<String> MODULE_JARS =
      List.of(
          "curator-framework-",
          "curator-recipes-",
          "curator-client-",
          "zookeeper-3",
          "slf4j-api-",
          "spring-integration-core-",
          "micrometer-core-",
          "micrometer-observation-1",
          "micrometer-commons-",
          "reactor-core-",
          "reactive-streams-",
          "spring-boot-4",
          "spring-boot-autoconfigure-",
          "spring-boot-health-",
          "spring-boot-actuator-4",
          "spring-boot-actuator-autoconfigure-",
          "spring-web-",
          "spring-webflux-",
          "spring-jdbc-",
          "spring-tx-",
          "jakarta.servlet-api-");

  @Test
  void theDescriptor_compiles_andExportsOnlyTheApi(@TempDir Path out) throws Exception {
    ModuleDescriptor module = compile(out);

    assertThat(module.name()).isEqualTo("io.lockstep.recipes");
    assertThat(module.exports())
        .allMatch(export -> !export.isQualified())
        .extracting(ModuleDescriptor.Exports::source)
        .containsExactlyInAnyOrderElementsOf(ApiSurfaceTest.EXPORTED);
    assertThat(module.opens()).isEmpty();
    Set<String> engine = new TreeSet<>();
    for (Class<?> type : ApiSurfaceTest.classes()) {
      if (!ApiSurfaceTest.EXPORTED.contains(type.getPackageName())) {
        engine.add(type.getPackageName());
      }
    }
    assertThat(engine)
        .as("the engine's packages, none exported")
        .isNotEmpty()
        .doesNotContainAnyElementsOf(
            module.exports().stream().map(ModuleDescriptor.Exports::source).toList());
  }

  @Test
  void theOptionalLibraries_areNeededOnlyStatically(@TempDir Path out) throws Exception {
    ModuleDescriptor module = compile(out);

    for (String optional :
        List.of(
            "spring.integration.core",
            "micrometer.core",
            "micrometer.observation",
            "micrometer.commons",
            "reactor.core",
            "org.reactivestreams",
            "jdk.jfr",
            "spring.boot",
            "spring.boot.autoconfigure",
            "spring.boot.health",
            "spring.boot.actuator",
            "spring.boot.actuator.autoconfigure",
            "spring.web",
            "spring.webflux",
            "spring.jdbc",
            "spring.tx",
            "jakarta.servlet")) {
      assertThat(module.requires())
          .filteredOn(requires -> requires.name().equals(optional))
          .singleElement()
          .satisfies(
              requires ->
                  assertThat(requires.modifiers())
                      .contains(ModuleDescriptor.Requires.Modifier.STATIC));
    }
    assertThat(module.requires())
        .filteredOn(requires -> requires.name().startsWith("curator"))
        .allMatch(
            requires ->
                requires.modifiers().contains(ModuleDescriptor.Requires.Modifier.TRANSITIVE));
  }

  /**
   * Compiles the descriptor as the library's module: its classes patched in, the modules it names
   * on the module path (ZooKeeper's jute jar left out: it splits packages with ZooKeeper's).
   */
  private static ModuleDescriptor compile(Path out) throws Exception {
    List<String> modulePath = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      String name = Path.of(entry).getFileName().toString();
      if (MODULE_JARS.stream().anyMatch(name::startsWith)) {
        modulePath.add(entry);
      }
    }
    assertThat(modulePath).as("the jars the descriptor names").hasSize(MODULE_JARS.size());
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    List<String> args =
        List.of(
            "-d",
            out.toString(),
            "--module-path",
            modulePath.stream().collect(Collectors.joining(java.io.File.pathSeparator)),
            "--patch-module",
            "io.lockstep.recipes=" + ApiSurfaceTest.classesRoot(),
            "-Xlint:-requires-transitive-automatic",
            SOURCE.toString());
    int status = javac.run(null, null, null, args.toArray(new String[0]));
    assertThat(status).as("javac %s", args).isZero();
    try (InputStream in = Files.newInputStream(out.resolve("module-info.class"))) {
      return ModuleDescriptor.read(in);
    }
  }
}

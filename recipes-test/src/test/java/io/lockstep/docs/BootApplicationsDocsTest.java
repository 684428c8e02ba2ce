package io.lockstep.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Spring Boot applications that recipes-test's build makes and tests (maven-invoker-plugin,
 * {@code recipes-test/src/it/boot-*}) use the dependencies the docs give, verbatim: the {@code xml}
 * block of docs/spring-boot.md's "Dependency" and that of docs/getting-started.md's "Add the
 * library" are in each application's POM, at this build's version, so that the docs cannot drift
 * from what is built. Each application has Boot's parent at a version the Boot page names.
 */
@Timeout(30)
class BootApplicationsDocsTest {
  private static final Pattern XML_BLOCK = Pattern.compile("(?ms)^```xml\\n(.*?)^```[ \\t]*$");
  private static final Pattern PARENT =
      Pattern.compile(
          "<parent>\\s*<groupId>org\\.springframework\\.boot</groupId>\\s*"
              + "<artifactId>spring-boot-starter-parent</artifactId>\\s*"
              + "<version>([^<]+)</version>");
  private static final Pattern LOCKSTEP_VERSION =
      Pattern.compile(
          "<groupId>io\\.lockstep</groupId>\\s*<artifactId>lockstep-recipes</artifactId>\\s*"
              + "<version>([^<]+)</version>");

  @Test
  void everyBootApplication_hasTheDocsDependencySnippets_verbatim() throws IOException {
    Path root = DocsExamplesTest.repositoryRoot();
    String bootPage = Files.readString(root.resolve("docs/spring-boot.md"));
    List<String> snippets =
        List.of(
            firstXmlBlock(section(bootPage, "## Dependency")),
            firstXmlBlock(
                section(
                    Files.readString(root.resolve("docs/getting-started.md")),
                    "## Add the library")));
    List<Path> poms = applicationPoms(root);
    assertThat(poms).as("the Boot applications under recipes-test/src/it").hasSize(2);

    List<String> problems = new ArrayList<>();
    for (Path pom : poms) {
      String lines = normalized(Files.readString(pom));
      for (String snippet : snippets) {
        if (!lines.contains(normalized(snippet))) {
          problems.add(root.relativize(pom) + " lacks the docs' snippet:\n" + snippet);
        }
      }
    }
    assertThat(problems).isEmpty();
  }

  @Test
  void theDocsSnippet_namesThisBuildsVersion() throws IOException {
    Path root = DocsExamplesTest.repositoryRoot();
    String snippet =
        firstXmlBlock(
            section(Files.readString(root.resolve("docs/spring-boot.md")), "## Dependency"));
    Matcher projectVersion =
        Pattern.compile("<artifactId>lockstep-parent</artifactId>\\s*<version>([^<]+)</version>")
            .matcher(Files.readString(root.resolve("pom.xml")));
    assertThat(projectVersion.find()).isTrue();
    Matcher documented = LOCKSTEP_VERSION.matcher(snippet);
    assertThat(documented.find()).as(snippet).isTrue();

    assertThat(documented.group(1)).isEqualTo(projectVersion.group(1));
  }

  @Test
  void everyBootApplication_isOnABootVersionTheBootPageNames() throws IOException {
    Path root = DocsExamplesTest.repositoryRoot();
    String bootPage = Files.readString(root.resolve("docs/spring-boot.md"));
    List<String> versions = new ArrayList<>();
    for (Path pom : applicationPoms(root)) {
      Matcher parent = PARENT.matcher(Files.readString(pom));
      assertThat(parent.find()).as(pom + " has Boot's parent").isTrue();
      versions.add(parent.group(1));
    }

    assertThat(versions).containsExactlyInAnyOrder("4.0.7", "4.1.2");
    assertThat(bootPage).contains(versions.stream().map(v -> "Boot " + v).toList());
  }

  private static List<Path> applicationPoms(Path root) throws IOException {
    try (Stream<Path> dirs = Files.list(root.resolve("recipes-test/src/it"))) {
      return dirs.map(dir -> dir.resolve("pom.xml")).filter(Files::isRegularFile).sorted().toList();
    }
  }

  /** The text of a page from a heading to the next heading of the same level. */
  private static String section(String page, String heading) {
    int start = page.indexOf("\n" + heading + "\n");
    assertThat(start).as("the heading " + heading).isNotNegative();
    int end = page.indexOf("\n## ", start + heading.length() + 1);
    return end < 0 ? page.substring(start) : page.substring(start, end);
  }

  private static String firstXmlBlock(String text) {
    Matcher block = XML_BLOCK.matcher(text);
    assertThat(block.find()).as("an xml block in:\n" + text).isTrue();
    return block.group(1);
  }

  /** The lines, stripped of their indentation, without blank ones: indentation may differ. */
  private static String normalized(String xml) {
    return xml.lines()
        .map(String::strip)
        .filter(line -> !line.isEmpty())
        .collect(Collectors.joining("\n", "\n", "\n"));
  }
}

package io.lockstep.docs;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.LambdaExpressionTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.ReturnTree;
import com.sun.source.tree.StatementTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreeScanner;
import com.sun.source.util.Trees;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every Java example a reader sees compiles as the reader sees it: the blocks of {@code README.md}
 * and {@code docs/*.md}, and the {@code <pre>{@code ...}</pre>} blocks of the public Javadoc. Where
 * {@link DocsExamplesTest} runs the examples inside test methods that supply what they use, this
 * test compiles the page alone, so an example that uses a name the page never declares, or a class
 * the page never imports, fails here.
 *
 * <p>The rules a page follows:
 *
 * <ul>
 *   <li>A block may start with {@code import} lines. The imports of a page's blocks so far apply to
 *       the block (a reader copies the page from the top).
 *   <li>A name a block uses is declared in it or at the top level of an earlier block of the page.
 *       What the reader brings (a started client, a connection string, the service's executor) is
 *       declared as {@code Type name = ...;}, with a comment: the type names it, the test stands a
 *       value in for the dots.
 *   <li>A block that declares a type (the getting-started page's {@code FencedStore}, the design
 *       page's driver) or annotated methods (Spring's {@code @Bean}s) is a class member. The types
 *       the pages declare are known to every page and Javadoc block, like the API's classes.
 *   <li>A Javadoc block stands alone: its own imports and declarations (types of the API's package
 *       too, as a user's code imports them).
 * </ul>
 */
@Timeout(120)
class DocsCompileTest {
  private static final String PACKAGE = "docsexamples";
  private static final Pattern JAVA_BLOCK =
      Pattern.compile("(?ms)^( *)```java\\n(.*?)^\\1```[ \\t]*$");
  private static final Pattern JAVADOC_BLOCK =
      Pattern.compile("(?s)<pre>\\{@code\\n(.*?)\\}</pre>");
  private static final Pattern IMPORT = Pattern.compile("^import (static )?[\\w.]+(\\.\\*)?;$");
  private static final Pattern GIVEN = Pattern.compile("=\\s*\\.\\.\\.\\s*;");
  private static final Pattern MEMBER =
      Pattern.compile(
          "^(@\\w+|((public|protected|private|static|final|abstract|sealed)\\s+)*"
              + "(class|interface|record|enum)\\s)");

  @Test
  void everyExampleOfTheDocsAndTheJavadoc_compilesAsThePageShowsIt(@TempDir Path classes)
      throws IOException {
    Path root = repositoryRoot();
    List<Page> pages = new ArrayList<>(markdownPages(root));
    pages.addAll(javadocPages(root.resolve("recipes/src/main/java")));

    List<String> problems = compile(pages, classes);

    assertThat(problems).isEmpty();
    assertThat(pages.stream().mapToInt(page -> page.blocks().size()).sum())
        .as("blocks found")
        .isGreaterThan(50);
  }

  /** The check of this class fails on the faults it is there to find. */
  @Test
  void anExampleWithAnUndeclaredNameOrAMissingImport_fails(@TempDir Path classes) {
    Page broken =
        new Page(
            "broken.md",
            List.of(
                new Block(
                    1,
                    "import io.lockstep.recipes.locks.ReentrantMutex;\n\n"
                        + "CuratorFramework client = ...; // a started client\n"
                        + "ReentrantMutex lock = new ReentrantMutex(client, \"/locks/a\");"),
                new Block(
                    10,
                    "lock.acquire();\n"
                        + "try {\n"
                        + "  store.write(\"a\", \"b\", lock.fencingToken());\n"
                        + "} finally {\n"
                        + "  lock.release();\n"
                        + "}")));
    Page fine =
        new Page(
            "fine.md",
            List.of(
                new Block(
                    1,
                    "import io.lockstep.recipes.locks.ReentrantMutex;\n"
                        + "import org.apache.curator.framework.CuratorFramework;\n\n"
                        + "CuratorFramework client = ...; // a started client\n"
                        + "FencedStore store = ...; // your store\n"
                        + "ReentrantMutex lock = new ReentrantMutex(client, \"/locks/a\");"),
                new Block(
                    10,
                    "lock.acquire();\n"
                        + "try {\n"
                        + "  store.write(\"a\", \"b\", lock.fencingToken());\n"
                        + "} finally {\n"
                        + "  lock.release();\n"
                        + "}"),
                new Block(
                    20,
                    "import java.util.HashMap;\nimport java.util.Map;\n\n"
                        + "static final class FencedStore {\n"
                        + "  private final Map<String, Long> tokens = new HashMap<>();\n\n"
                        + "  void write(String key, String value, long token) {\n"
                        + "    tokens.put(key, token);\n"
                        + "  }\n"
                        + "}")));

    List<String> problems = compile(List.of(broken, fine), classes);

    assertThat(problems)
        .hasSize(2)
        .anySatisfy(
            problem ->
                assertThat(problem)
                    .startsWith("broken.md:3:")
                    .contains("cannot find symbol")
                    .contains("class CuratorFramework"))
        .anySatisfy(
            problem ->
                assertThat(problem)
                    .startsWith("broken.md:12:")
                    .contains("cannot find symbol")
                    .contains("variable store"));
  }

  // ---- reading the blocks ----

  /** A block of Java: the line of the page its code starts on, and the code. */
  record Block(int line, String code) {}

  /** Blocks read top to bottom: a Markdown page, or one Javadoc block on its own. */
  record Page(String name, List<Block> blocks) {}

  private static List<Page> markdownPages(Path root) throws IOException {
    List<Path> files = new ArrayList<>();
    files.add(root.resolve("README.md"));
    try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
    }
    List<Page> pages = new ArrayList<>();
    for (Path file : files) {
      String text = Files.readString(file);
      List<Block> blocks = new ArrayList<>();
      Matcher matcher = JAVA_BLOCK.matcher(text);
      while (matcher.find()) {
        int line = lineOf(text, matcher.start(2));
        blocks.add(new Block(line, dedent(matcher.group(2))));
      }
      pages.add(new Page(root.relativize(file).toString().replace('\\', '/'), blocks));
    }
    return pages;
  }

  /** Each {@code <pre>{@code ...}</pre>} block of the API's sources, a page of its own. */
  private static List<Page> javadocPages(Path sources) throws IOException {
    List<Page> pages = new ArrayList<>();
    List<Path> files;
    try (Stream<Path> walk = Files.walk(sources)) {
      files =
          walk.filter(p -> p.toString().endsWith(".java"))
              .filter(p -> !p.toString().contains("/internal/"))
              .sorted()
              .toList();
    }
    for (Path file : files) {
      String text = Files.readString(file);
      Matcher matcher = JAVADOC_BLOCK.matcher(text);
      while (matcher.find()) {
        int line = lineOf(text, matcher.start(1));
        StringBuilder code = new StringBuilder();
        for (String raw : matcher.group(1).split("\n", -1)) {
          String unstarred =
              raw.strip().startsWith("*") ? raw.substring(raw.indexOf('*') + 1) : raw;
          code.append(unstarred.startsWith(" ") ? unstarred.substring(1) : unstarred).append('\n');
        }
        String name = sources.relativize(file).toString().replace('\\', '/') + ":" + line;
        pages.add(new Page(name, List.of(new Block(line, code.toString().stripTrailing()))));
      }
    }
    return pages;
  }

  // ---- compiling them ----

  /** One block as a compilation unit: its source and, for each line, the page's line (or 0). */
  private record Unit(Page page, String className, String source, int[] pageLines) {}

  /** A block cut in two: its import lines, and the code after them. */
  private record Parts(List<String> imports, List<String> body, int bodyLine, boolean member) {}

  private static List<String> compile(List<Page> pages, Path classes) {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    Map<Block, Parts> parts = new LinkedHashMap<>();
    for (Page page : pages) {
      for (Block block : page.blocks()) {
        parts.put(block, split(block));
      }
    }

    // The names a statement block declares at its top level, and whether it returns a value.
    Map<Block, Shape> shapes = shapes(javac, parts);
    // The types the member blocks declare, known to every block.
    Map<String, String> sharedTypes = new LinkedHashMap<>();

    List<Unit> units = new ArrayList<>();
    int pageNumber = 0;
    for (Page page : pages) {
      pageNumber++;
      Set<String> imports = new LinkedHashSet<>();
      Map<String, Declaration> declared = new LinkedHashMap<>(); // by name, earlier blocks
      int blockNumber = 0;
      for (Block block : page.blocks()) {
        blockNumber++;
        Parts p = parts.get(block);
        imports.addAll(p.imports());
        String className = "Page" + pageNumber + "Block" + blockNumber;
        Shape shape = shapes.get(block);
        units.add(unit(page, className, List.copyOf(imports), p, declared, shape));
        if (p.member()) {
          for (String type : memberTypes(p.body())) {
            sharedTypes.putIfAbsent(type, PACKAGE + "." + className + "." + type);
          }
        } else if (shape != null) {
          declared.putAll(shape.declarations());
        }
      }
    }
    units = units.stream().map(u -> withSharedTypes(u, sharedTypes)).toList();
    units = new ArrayList<>(units);
    units.add(givenUnit());
    Map<String, String> pageCode = new LinkedHashMap<>(); // "page:line" to the code shown there
    for (Page page : pages) {
      for (Block block : page.blocks()) {
        String[] lines = block.code().split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
          pageCode.put(page.name() + ":" + (block.line() + i), lines[i].strip());
        }
      }
    }
    return run(javac, units, pageCode, classes);
  }

  private static Parts split(Block block) {
    List<String> lines = List.of(block.code().split("\n", -1));
    List<String> imports = new ArrayList<>();
    int i = 0;
    while (i < lines.size()
        && (lines.get(i).isBlank() || IMPORT.matcher(lines.get(i).strip()).matches())) {
      if (!lines.get(i).isBlank()) {
        imports.add(lines.get(i).strip());
      }
      i++;
    }
    List<String> body = lines.subList(i, lines.size());
    return new Parts(imports, body, block.line() + i, isMember(body));
  }

  /** Whether the first line of code declares a type or an annotated member. */
  private static boolean isMember(List<String> body) {
    boolean inComment = false;
    for (String line : body) {
      String code = line.strip();
      if (inComment) {
        inComment = !code.contains("*/");
        continue;
      }
      if (code.isEmpty() || code.startsWith("//")) {
        continue;
      }
      if (code.startsWith("/*")) {
        inComment = !code.contains("*/");
        continue;
      }
      return MEMBER.matcher(code).find();
    }
    return false;
  }

  private static Unit unit(
      Page page,
      String className,
      List<String> imports,
      Parts parts,
      Map<String, Declaration> declared,
      Shape shape) {
    List<String> lines = new ArrayList<>();
    List<Integer> pageLines = new ArrayList<>(); // the page's line of each line, 0 if none
    lines.add("package " + PACKAGE + ";");
    lines.addAll(imports);
    lines.add("import static " + PACKAGE + ".Given.given;");
    lines.add("@SuppressWarnings(\"all\")");
    lines.add("class " + className + " {");
    while (pageLines.size() < lines.size()) {
      pageLines.add(0);
    }
    if (!parts.member()) {
      declared.forEach(
          (name, declaration) -> {
            lines.add("  " + declaration.type() + " " + name + ";");
            pageLines.add(declaration.pageLine());
          });
      String returns = shape != null && shape.returnsValue() ? "Object" : "void";
      lines.add("  " + returns + " example() throws Exception {");
      pageLines.add(0);
    }
    for (int i = 0; i < parts.body().size(); i++) {
      lines.add(GIVEN.matcher(parts.body().get(i)).replaceAll("= given();"));
      pageLines.add(parts.bodyLine() + i);
    }
    if (!parts.member()) {
      lines.add("  }");
      pageLines.add(0);
    }
    lines.add("}");
    pageLines.add(0);
    return new Unit(
        page,
        className,
        String.join("\n", lines) + "\n",
        pageLines.stream().mapToInt(Integer::intValue).toArray());
  }

  /** Adds an import of each type the pages declare, unless the unit has that simple name. */
  private static Unit withSharedTypes(Unit unit, Map<String, String> sharedTypes) {
    StringBuilder extra = new StringBuilder();
    int added = 0;
    for (Map.Entry<String, String> type : sharedTypes.entrySet()) {
      boolean own = type.getValue().startsWith(PACKAGE + "." + unit.className() + ".");
      boolean clash = unit.source().contains("." + type.getKey() + ";");
      if (!own && !clash) {
        extra.append("import ").append(type.getValue()).append(";\n");
        added++;
      }
    }
    int afterPackage = unit.source().indexOf('\n') + 1;
    String source =
        unit.source().substring(0, afterPackage) + extra + unit.source().substring(afterPackage);
    int[] pageLines = new int[unit.pageLines().length + added];
    pageLines[0] = unit.pageLines()[0];
    System.arraycopy(unit.pageLines(), 1, pageLines, 1 + added, unit.pageLines().length - 1);
    return new Unit(unit.page(), unit.className(), source, pageLines);
  }

  /** {@code given()} stands for the dots of {@code Type name = ...;}: any type, no value. */
  private static Unit givenUnit() {
    String source =
        "package "
            + PACKAGE
            + ";\nfinal class Given {\n  static <T> T given() {\n    return null;\n  }\n}\n";
    return new Unit(new Page("Given", List.of()), "Given", source, new int[7]);
  }

  private static final Pattern TYPE_DECLARATION =
      Pattern.compile("^(?:\\w+\\s+)*?(?:class|interface|record|enum)\\s+(\\w+)");

  /** The names of the types a member block declares at its top level. */
  private static List<String> memberTypes(List<String> body) {
    List<String> types = new ArrayList<>();
    for (String line : body) {
      if (!line.startsWith(" ")) {
        Matcher matcher = TYPE_DECLARATION.matcher(line);
        if (matcher.find()) {
          types.add(matcher.group(1));
        }
      }
    }
    return types;
  }

  /** What a statement block declares at its top level (name to type), and if it returns a value. */
  private record Shape(Map<String, Declaration> declarations, boolean returnsValue) {}

  /** A variable a block declares at its top level: its type, and the page's line. */
  private record Declaration(String type, int pageLine) {}

  /** Parses every statement block as a method body, without resolving any name. */
  private static Map<Block, Shape> shapes(JavaCompiler javac, Map<Block, Parts> parts) {
    Map<Block, Shape> shapes = new LinkedHashMap<>();
    List<JavaFileObject> sources = new ArrayList<>();
    List<Block> blocks = new ArrayList<>();
    for (Map.Entry<Block, Parts> entry : parts.entrySet()) {
      if (!entry.getValue().member()) {
        String body = GIVEN.matcher(String.join("\n", entry.getValue().body())).replaceAll("= x;");
        sources.add(
            new Source(
                "Shape" + blocks.size(),
                "class Shape { void m() throws Exception {\n" + body + "\n}}"));
        blocks.add(entry.getKey());
      }
    }
    DiagnosticCollector<JavaFileObject> ignored = new DiagnosticCollector<>();
    JavacTask task =
        (JavacTask) javac.getTask(null, null, ignored, List.of("-proc:none"), null, sources);
    Iterable<? extends CompilationUnitTree> trees;
    try {
      trees = task.parse();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    SourcePositions positions = Trees.instance(task).getSourcePositions();
    int i = 0;
    for (CompilationUnitTree tree : trees) {
      ClassTree type = (ClassTree) tree.getTypeDecls().get(0);
      MethodTree method =
          (MethodTree)
              type.getMembers().stream()
                  .filter(member -> member.getKind() == Tree.Kind.METHOD)
                  .findFirst()
                  .orElseThrow();
      Block block = blocks.get(i++);
      Map<String, Declaration> declarations = new LinkedHashMap<>();
      if (method.getBody() != null) {
        for (StatementTree statement : method.getBody().getStatements()) {
          if (statement instanceof VariableTree variable) {
            long start = positions.getStartPosition(tree, variable);
            int bodyIndex = (int) tree.getLineMap().getLineNumber(start) - 2; // after the header
            declarations.put(
                variable.getName().toString(),
                new Declaration(
                    variable.getType().toString(), parts.get(block).bodyLine() + bodyIndex));
          }
        }
      }
      shapes.put(block, new Shape(declarations, returnsValue(method)));
    }
    return shapes;
  }

  /** Whether the method returns a value itself (not from a lambda or a class inside it). */
  private static boolean returnsValue(MethodTree method) {
    Boolean found =
        new TreeScanner<Boolean, Void>() {
          @Override
          public Boolean visitReturn(ReturnTree node, Void unused) {
            return node.getExpression() != null;
          }

          @Override
          public Boolean visitLambdaExpression(LambdaExpressionTree node, Void unused) {
            return false;
          }

          @Override
          public Boolean visitClass(ClassTree node, Void unused) {
            return false;
          }

          @Override
          public Boolean reduce(Boolean a, Boolean b) {
            return Boolean.TRUE.equals(a) || Boolean.TRUE.equals(b);
          }
        }.scan(method.getBody(), null);
    return Boolean.TRUE.equals(found);
  }

  private static List<String> run(
      JavaCompiler javac, List<Unit> units, Map<String, String> pageCode, Path classes) {
    Map<String, Unit> byName = new LinkedHashMap<>();
    List<JavaFileObject> sources = new ArrayList<>();
    for (Unit unit : units) {
      byName.put(unit.className(), unit);
      sources.add(new Source(PACKAGE + "/" + unit.className(), unit.source()));
    }
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    List<String> options =
        List.of(
            "-proc:none",
            "-nowarn",
            "-Xmaxerrs",
            "1000",
            "-d",
            classes.toString(),
            "-classpath",
            System.getProperty("java.class.path"));
    try (StandardJavaFileManager files = javac.getStandardFileManager(null, Locale.ROOT, UTF_8)) {
      javac.getTask(null, files, diagnostics, options, null, sources).call();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    // An error in a declaration is also one in each later block of its page (a field there):
    // reported once, at the line of the page that has it.
    Map<String, String> problems = new LinkedHashMap<>();
    for (Diagnostic<? extends JavaFileObject> diagnostic : diagnostics.getDiagnostics()) {
      if (diagnostic.getKind() != Diagnostic.Kind.ERROR) {
        continue;
      }
      String file = diagnostic.getSource() == null ? "" : diagnostic.getSource().getName();
      String className = file.substring(file.lastIndexOf('/') + 1).replace(".java", "");
      Unit unit = byName.get(className);
      int line = (int) diagnostic.getLineNumber();
      int pageLine =
          unit != null && line > 0 && line <= unit.pageLines().length
              ? unit.pageLines()[line - 1]
              : 0;
      String where = unit == null ? file : unit.page().name() + ":" + pageLine;
      String code = pageCode.getOrDefault(where, "");
      String message =
          diagnostic
              .getMessage(Locale.ROOT)
              .lines()
              .filter(text -> !text.strip().startsWith("location:")) // a generated class
              .collect(Collectors.joining("\n"));
      problems.putIfAbsent(where + ": " + message, where + ": " + message + "\n    " + code);
    }
    return new ArrayList<>(problems.values());
  }

  /** A Java source in memory. */
  private static final class Source extends SimpleJavaFileObject {
    private final String code;

    Source(String name, String code) {
      super(URI.create("string:///" + name + ".java"), JavaFileObject.Kind.SOURCE);
      this.code = code;
    }

    @Override
    public CharSequence getCharContent(boolean ignoreEncodingErrors) {
      return code;
    }
  }

  // ---- helpers ----

  private static int lineOf(String text, int offset) {
    int line = 1;
    for (int i = 0; i < offset; i++) {
      if (text.charAt(i) == '\n') {
        line++;
      }
    }
    return line;
  }

  private static String dedent(String block) {
    List<String> lines = new ArrayList<>();
    int indent = Integer.MAX_VALUE;
    for (String line : block.split("\n", -1)) {
      lines.add(line);
      if (!line.isBlank()) {
        indent = Math.min(indent, line.length() - line.stripLeading().length());
      }
    }
    int cut = indent == Integer.MAX_VALUE ? 0 : indent;
    StringBuilder out = new StringBuilder();
    for (String line : lines) {
      out.append(line.isBlank() ? "" : line.substring(Math.min(cut, line.length()))).append('\n');
    }
    return out.toString().stripTrailing();
  }

  private static Path repositoryRoot() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null && !Files.isDirectory(dir.resolve("docs"))) {
      dir = dir.getParent();
    }
    assertThat(dir).as("a parent directory with docs/").isNotNull();
    return dir;
  }
}

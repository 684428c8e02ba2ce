package io.lockstep.bench;

import io.lockstep.testing.Library;
import io.lockstep.testing.Recipe;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * The classes and methods one uncontended acquire + release cycle of a lock recipe runs through,
 * ours and Curator's, as {@code docs/design.md} ("The uncontended path, class by class") lists
 * them. Measured, not read off the code: a JVM with HotSpot's {@code -XX:+LogTouchedMethods} makes
 * a client and a lock object and runs no cycle; another does the same and runs one; the methods the
 * second touched and the first did not are the cycle's ({@value #RUNS} runs of each, so that the
 * client's occasional background work is not counted). A method the construction touched too is not
 * counted, so the figures are a lower bound, the same for both libraries. No listener, observer or
 * recording; the lock's directories are made beforehand through a plain ZooKeeper handle (no
 * Curator or Lockstep code), so the first create needs none, as in the uncontended benchmark.
 *
 * <p>Classes are counted by their top-level class (a record nested in {@code Step} counts as {@code
 * Step}), methods with their lambdas' bodies, and the lambdas' generated classes not at all.
 * Lockstep's classes are {@code io.lockstep} outside this harness; Curator's are {@code
 * org.apache.curator} outside {@code curator-test} and Curator's shaded Guava.
 *
 * <p><b>Command</b> (from the repository root, on a HotSpot JDK 17 to 21):
 *
 * <pre>
 * mvn -B -q -o -pl recipes,recipes-test/kit,recipes-test test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=target/classpath.txt
 * java -cp "recipes-test/target/classes:$(cat recipes-test/target/classpath.txt)" \
 *     io.lockstep.bench.TouchedMethods [MUTEX|NON_REENTRANT_MUTEX|READ|WRITE]
 * </pre>
 *
 * <p>With {@code -Dtouched.list=true} before the class name it also prints each method counted.
 */
public final class TouchedMethods {
  private static final String HEADER = "# Method::print_touched_methods";

  /**
   * The runs of each kind: the client's background work (Curator's ensemble tracker, the connection
   * state) touches some methods only now and then, so construction is what any run without a cycle
   * touched, and the cycle what every run with one touched.
   */
  private static final int RUNS = 3;

  private TouchedMethods() {}

  /**
   * Measures both libraries' cycle of a recipe ({@code MUTEX} if none is named) on a server of its
   * own and prints what each touched; or, with {@code --cycles}, is the measured JVM.
   *
   * @param args {@code [recipe]}, or {@code --cycles library recipe connectString path n}
   * @throws Exception if the server, a measured JVM or a request fails
   */
  public static void main(String[] args) throws Exception {
    if (args.length == 6 && args[0].equals("--cycles")) {
      cycles(
          Library.valueOf(args[1]),
          Recipe.valueOf(args[2]),
          args[3],
          args[4],
          Integer.parseInt(args[5]));
      System.out.flush();
      System.exit(0); // the touched methods are printed at exit; no close, the same for 0 cycles
    }
    Recipe recipe = args.length > 0 ? Recipe.valueOf(args[0]) : Recipe.MUTEX;
    try (TestingServer server = new TestingServer(true)) {
      String connect = server.getConnectString();
      for (Library library : List.of(Library.LOCKSTEP, Library.CURATOR)) {
        String path = "/touched/" + library.name().toLowerCase(Locale.ROOT) + "/lock";
        makeDirectories(connect, recipe.directories(library, path, 1));
        Set<String> construction = new TreeSet<>(); // what any run without a cycle touched
        Set<String> cycle = touched(library, recipe, connect, path, 1); // what every run with one
        for (int run = 0; run < RUNS; run++) {
          construction.addAll(touched(library, recipe, connect, path, 0));
          if (run > 0) {
            cycle.retainAll(touched(library, recipe, connect, path, 1));
          }
        }
        cycle.removeAll(construction);
        System.out.println(
            "## "
                + recipe.className(library)
                + ": one cycle's methods that construction did not touch");
        report("Lockstep", cycle, TouchedMethods::lockstep);
        report("Curator", cycle, TouchedMethods::curator);
      }
    }
  }

  /** The measured JVM's work: a client, a lock, {@code n} cycles. */
  private static void cycles(Library library, Recipe recipe, String connect, String path, int n)
      throws Exception {
    CuratorFramework client = CuratorFrameworkFactory.newClient(connect, new RetryNTimes(3, 100));
    client.start();
    if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("no connection to " + connect);
    }
    InterProcessLock lock = recipe.newLock(library, client, path, 1);
    for (int i = 0; i < n; i++) {
      lock.acquire();
      lock.release();
    }
  }

  /** Makes {@code directories} and their parents, persistent, with a plain ZooKeeper handle. */
  private static void makeDirectories(String connect, List<String> directories)
      throws IOException, InterruptedException, KeeperException {
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper zk =
        new ZooKeeper(
            connect,
            30_000,
            event -> {
              if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
              }
            });
    try {
      if (!connected.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("no connection to " + connect);
      }
      for (String directory : directories) {
        StringBuilder at = new StringBuilder();
        for (String part : directory.substring(1).split("/", -1)) {
          at.append('/').append(part);
          try {
            zk.create(
                at.toString(), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
          } catch (KeeperException.NodeExistsException exists) {
            // made already
          }
        }
      }
    } finally {
      zk.close();
    }
  }

  /** The methods a measured JVM running {@code n} cycles touched, as HotSpot names them. */
  private static Set<String> touched(
      Library library, Recipe recipe, String connect, String path, int n)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(
        List.of(
            "-XX:+UnlockDiagnosticVMOptions",
            "-XX:+LogTouchedMethods",
            "-XX:+PrintTouchedMethodsAtExit",
            "-cp",
            System.getProperty("java.class.path"),
            TouchedMethods.class.getName(),
            "--cycles",
            library.name(),
            recipe.name(),
            connect,
            path,
            Integer.toString(n)));
    Process process =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    Set<String> methods = new TreeSet<>();
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      boolean listing = false;
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        if (line.startsWith(HEADER)) {
          listing = true;
        } else if (listing && line.indexOf(':') > 0) {
          methods.add(line);
        }
      }
    }
    if (process.waitFor() != 0 || methods.isEmpty()) {
      throw new IllegalStateException(
          "the measured JVM failed or printed no touched methods: " + command);
    }
    return methods;
  }

  private static boolean lockstep(String method) {
    return method.startsWith("io/lockstep/")
        && !method.startsWith("io/lockstep/bench/")
        && !method.startsWith("io/lockstep/testing/");
  }

  private static boolean curator(String method) {
    return method.startsWith("org/apache/curator/")
        && !method.startsWith("org/apache/curator/test/")
        && !method.startsWith("org/apache/curator/shaded/");
  }

  /** Prints the methods of {@code owner}'s classes, by top-level class, with the totals. */
  private static void report(String owner, Set<String> methods, Predicate<String> ofOwner) {
    Map<String, Integer> byClass = new TreeMap<>();
    for (String method : methods) {
      if (!ofOwner.test(method)) {
        continue;
      }
      String type = method.substring(0, method.lastIndexOf('.', method.indexOf(':')));
      if (type.contains("$$Lambda")) {
        continue; // a lambda's generated class: its body is a method of the declaring class
      }
      int nested = type.indexOf('$');
      String topLevel = nested < 0 ? type : type.substring(0, nested);
      byClass.merge(topLevel.substring(topLevel.lastIndexOf('/') + 1), 1, Integer::sum);
    }
    if (Boolean.getBoolean("touched.list")) {
      methods.stream().filter(ofOwner).forEach(method -> System.out.println("    " + method));
    }
    int total = byClass.values().stream().mapToInt(Integer::intValue).sum();
    System.out.println(owner + ": " + byClass.size() + " classes, " + total + " methods");
    byClass.forEach((type, count) -> System.out.println("  " + type + " " + count));
  }
}

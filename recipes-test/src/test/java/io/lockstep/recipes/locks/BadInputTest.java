package io.lockstep.recipes.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lockstep.testing.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every public constructor and method with a bad argument: a clear exception naming the argument,
 * and nothing sent to or created on the server.
 */
@Timeout(30)
class BadInputTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** A call with a bad argument, given a started client and a valid lock path. */
  @FunctionalInterface
  interface BadCall {
    void call(CuratorFramework client, String path) throws Exception;
  }

  static Stream<Arguments> badCalls() {
    return Stream.of(
            constructorCases("ReentrantMutex", ReentrantMutex::new, ReentrantMutex::new),
            constructorCases("NonReentrantMutex", NonReentrantMutex::new, NonReentrantMutex::new),
            methodCases("ReentrantMutex", (c, p) -> new ReentrantMutex(c, p)),
            methodCases("NonReentrantMutex", (c, p) -> new NonReentrantMutex(c, p)),
            methodCases("ReadLock", (c, p) -> new ReadWriteMutex(c, p).readLock()),
            methodCases("WriteLock", (c, p) -> new ReadWriteMutex(c, p).writeLock()),
            methodCases("MultiMutex", (c, p) -> new MultiMutex(c, List.of(p + "-a", p + "-b"))),
            readWriteCases(),
            multiCases(),
            Stream.of(
                bad(
                    "ReentrantMutex.makeRevocable(null)",
                    (c, p) -> new ReentrantMutex(c, p).makeRevocable(null),
                    NullPointerException.class,
                    "listener"),
                bad(
                    "ReentrantMutex.makeRevocable(listener, null)",
                    (c, p) -> new ReentrantMutex(c, p).makeRevocable(l -> {}, null),
                    NullPointerException.class,
                    "executor"),
                bad(
                    "ReadWriteMutex.Builder.localHandoff(0)",
                    (c, p) -> ReadWriteMutex.builder(c, p).localHandoff(0),
                    IllegalArgumentException.class,
                    "maxInARow"),
                bad(
                    "ReadWriteMutex.Builder.linger(ZERO)",
                    (c, p) -> ReadWriteMutex.builder(c, p).linger(java.time.Duration.ZERO),
                    IllegalArgumentException.class,
                    "linger"),
                bad(
                    "ReadWriteMutex.Builder.linger(null)",
                    (c, p) -> ReadWriteMutex.builder(c, p).linger(null),
                    NullPointerException.class,
                    "linger"),
                bad(
                    "LockDecision.watch(null)",
                    (c, p) -> LockDecision.watch(null),
                    NullPointerException.class,
                    "node")))
        .flatMap(Function.identity());
  }

  private interface TwoArgs {
    FencedLock make(CuratorFramework client, String path);
  }

  private interface ThreeArgs {
    FencedLock make(CuratorFramework client, String path, LockDriver driver);
  }

  private static Stream<Arguments> constructorCases(String type, TwoArgs two, ThreeArgs three) {
    LockDriver slashed =
        new LockDriver() {
          @Override
          public String lockName() {
            return "a/b";
          }

          @Override
          public LockDecision decide(List<String> sortedNodeNames, String ourNodeName) {
            return LockDecision.hold();
          }
        };
    return Stream.of(
        bad(
            type + "(null client)",
            (c, p) -> two.make(null, p),
            NullPointerException.class,
            "client"),
        bad(type + "(null path)", (c, p) -> two.make(c, null), NullPointerException.class, "path"),
        bad(
            type + "(empty path)",
            (c, p) -> two.make(c, ""),
            IllegalArgumentException.class,
            "path"),
        bad(
            type + "(relative path)",
            (c, p) -> two.make(c, "locks/a"),
            IllegalArgumentException.class,
            "path"),
        bad(
            type + "(trailing slash)",
            (c, p) -> two.make(c, p + "/"),
            IllegalArgumentException.class,
            "path"),
        bad(
            type + "(empty segment)",
            (c, p) -> two.make(c, p + "//x"),
            IllegalArgumentException.class,
            "path"),
        bad(
            type + "(relative segment)",
            (c, p) -> two.make(c, p + "/../x"),
            IllegalArgumentException.class,
            "path"),
        bad(
            type + "(control character)",
            (c, p) -> two.make(c, p + "/a\u0001"),
            IllegalArgumentException.class,
            "path"),
        bad(
            type + "(null driver)",
            (c, p) -> three.make(c, p, null),
            NullPointerException.class,
            "driver"),
        bad(
            type + "(driver name with '/')",
            (c, p) -> three.make(c, p, slashed),
            IllegalArgumentException.class,
            "driver.lockName()"));
  }

  private static Stream<Arguments> readWriteCases() {
    return Stream.of(
        bad(
            "ReadWriteMutex(null client)",
            (c, p) -> new ReadWriteMutex(null, p),
            NullPointerException.class,
            "client"),
        bad(
            "ReadWriteMutex(null path)",
            (c, p) -> new ReadWriteMutex(c, null),
            NullPointerException.class,
            "path"),
        bad(
            "ReadWriteMutex(trailing slash)",
            (c, p) -> new ReadWriteMutex(c, p + "/", new byte[0]),
            IllegalArgumentException.class,
            "path"));
  }

  private static Stream<Arguments> multiCases() {
    byte[] large = new byte[600 * 1024];
    return Stream.of(
        bad(
            "MultiMutex(null client)",
            (c, p) -> new MultiMutex(null, List.of(p)),
            NullPointerException.class,
            "client"),
        bad(
            "MultiMutex(null paths)",
            (c, p) -> new MultiMutex(c, null),
            NullPointerException.class,
            "paths"),
        bad(
            "MultiMutex(no paths)",
            (c, p) -> new MultiMutex(c, List.of()),
            IllegalArgumentException.class,
            "paths must not be empty"),
        bad(
            "MultiMutex(null element)",
            (c, p) -> new MultiMutex(c, java.util.Arrays.asList(p + "-a", null)),
            NullPointerException.class,
            "paths[1]"),
        bad(
            "MultiMutex(invalid element)",
            (c, p) -> new MultiMutex(c, List.of(p + "-a", "relative")),
            IllegalArgumentException.class,
            "paths[1]"),
        bad(
            "MultiMutex(duplicate paths)",
            (c, p) -> new MultiMutex(c, List.of(p + "-a", p + "-b", p + "-a")),
            IllegalArgumentException.class,
            "paths[0] and paths[2] are the same path"),
        bad(
            "MultiMutex(a path inside another)",
            (c, p) -> new MultiMutex(c, List.of(p + "/inner", p)),
            IllegalArgumentException.class,
            "lie one inside the other"),
        bad(
            "MultiMutex(transaction too large)",
            (c, p) -> MultiMutex.builder(c).mutex(p + "-a").write(p + "-b").lockData(large).build(),
            IllegalArgumentException.class,
            "jute.maxbuffer"),
        bad(
            "MultiMutex(null locks)",
            (c, p) ->
                new MultiMutex(
                    (List<org.apache.curator.framework.recipes.locks.InterProcessLock>) null),
            NullPointerException.class,
            "locks"),
        bad(
            "MultiMutex(no locks)",
            (c, p) ->
                new MultiMutex(
                    List.<org.apache.curator.framework.recipes.locks.InterProcessLock>of()),
            IllegalArgumentException.class,
            "locks must not be empty"),
        bad(
            "LockInspector(null)",
            (c, p) -> new LockInspector(null),
            NullPointerException.class,
            "client"),
        bad(
            "LockInspector.inspect(null)",
            (c, p) -> new LockInspector(c).inspect(null),
            NullPointerException.class,
            "path"),
        bad(
            "LockInspector.inspect(relative)",
            (c, p) -> new LockInspector(c).inspect("locks/a"),
            IllegalArgumentException.class,
            "path"),
        bad(
            "MultiMutex.builder(null)",
            (c, p) -> MultiMutex.builder(null),
            NullPointerException.class,
            "client"));
  }

  private static Stream<Arguments> methodCases(String type, TwoArgs make) {
    return Stream.of(
        bad(
            type + ".acquire(negative time)",
            (c, p) -> make.make(c, p).acquire(-1, TimeUnit.SECONDS),
            IllegalArgumentException.class,
            "time"),
        bad(
            type + ".acquire(null unit)",
            (c, p) -> make.make(c, p).acquire(1, null),
            NullPointerException.class,
            "unit"),
        bad(
            type + ".acquire(null Duration)",
            (c, p) -> make.make(c, p).acquire((Duration) null),
            NullPointerException.class,
            "timeout"),
        bad(
            type + ".acquire(negative Duration)",
            (c, p) -> make.make(c, p).acquire(Duration.ofNanos(-1)),
            IllegalArgumentException.class,
            "timeout"),
        bad(
            type + ".asLock().tryLock(null Duration)",
            (c, p) -> make.make(c, p).asLock().tryLock((Duration) null),
            NullPointerException.class,
            "timeout"),
        bad(
            type + ".release() when not held",
            (c, p) -> make.make(c, p).release(),
            IllegalMonitorStateException.class,
            "/"),
        bad(
            type + ".fencingToken() when not held",
            (c, p) -> make.make(c, p).fencingToken(),
            IllegalMonitorStateException.class,
            "/"),
        bad(
            type + ".checkHeld() when not held",
            (c, p) -> make.make(c, p).checkHeld(),
            IllegalMonitorStateException.class,
            "/"),
        bad(
            type + ".ownershipChecks() when not held",
            (c, p) -> make.make(c, p).ownershipChecks(),
            IllegalMonitorStateException.class,
            "/"));
  }

  private static Arguments bad(
      String name, BadCall call, Class<? extends Throwable> type, String mentions) {
    return Arguments.of(name, call, type, mentions);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badCalls")
  void badArgument_isRefusedClearly_andNothingReachesTheServer(
      String name, BadCall call, Class<? extends Throwable> type, String mentions)
      throws Exception {
    CuratorFramework client = zk.newClient();
    String path = zk.path("lock");
    long before = zk.requestsSoFar(client);

    ThrowingCallable attempt = () -> call.call(client, path);
    assertThatThrownBy(attempt).isInstanceOf(type).hasMessageContaining(mentions);

    assertThat(zk.requestsSoFar(client) - before).as("requests sent").isZero();
    assertThat(client.checkExists().forPath(path.substring(0, path.lastIndexOf('/'))))
        .as("nothing created")
        .isNull();
  }
}

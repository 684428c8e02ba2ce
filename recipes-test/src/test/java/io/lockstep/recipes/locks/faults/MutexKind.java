package io.lockstep.recipes.locks.faults;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;

/**
 * The mutexes the fault tests run over: the plain {@link ReentrantMutex}, one node per attempt, and
 * both mutexes with local handoff, where every lock object of one client on one path shares one
 * node and its local contenders take turns in memory.
 *
 * <p>The tests call each lock from the thread that acquired it (as a reentrant lock requires) and
 * never acquire twice from one thread without a release (as a non-reentrant lock requires), so the
 * same steps fit all three.
 *
 * <p>The default suite runs the fault tests on the plain mutex and on the reentrant one with local
 * handoff ({@link #inThisRun()}); the non-reentrant one with local handoff, which shares the
 * place's engine and differs only in who owns a hold (which the contract suites cover on every
 * kind), joins them with {@code -Pfaults} ({@code -Dfaults.allKinds=true}): the partitions and
 * expiries take seconds each, and the suite stays under its 15 minutes.
 */
enum MutexKind {
  REENTRANT_MUTEX((client, path) -> new ReentrantMutex(client, path)),
  /** Local handoff with a bound of 2, so that a run of local holds can reach it. */
  REENTRANT_MUTEX_LOCAL_HANDOFF(
      (client, path) -> ReentrantMutex.builder(client, path).localHandoff(2).build()),
  NON_REENTRANT_MUTEX_LOCAL_HANDOFF(
      (client, path) -> NonReentrantMutex.builder(client, path).localHandoff(2).build());

  @SuppressWarnings("ImmutableEnumChecker") // a stateless lambda
  private final BiFunction<CuratorFramework, String, FencedLock> factory;

  MutexKind(BiFunction<CuratorFramework, String, FencedLock> factory) {
    this.factory = factory;
  }

  /** The kinds this run's fault tests cover: all with {@code -Dfaults.allKinds=true}. */
  static Stream<MutexKind> inThisRun() {
    return Stream.of(values()).filter(MutexKind::runs);
  }

  /** The kinds with local handoff this run covers. */
  static Stream<MutexKind> localInThisRun() {
    return inThisRun().filter(MutexKind::handsOffLocally);
  }

  private boolean runs() {
    return this != NON_REENTRANT_MUTEX_LOCAL_HANDOFF || Boolean.getBoolean("faults.allKinds");
  }

  /** A new lock object of this kind on {@code path}. */
  FencedLock newLock(CuratorFramework client, String path) {
    return factory.apply(client, path);
  }

  /**
   * Whether the lock objects of one client on one path share one node (local handoff): they still
   * exclude each other, but queue in memory, not in ZooKeeper.
   */
  boolean handsOffLocally() {
    return this != REENTRANT_MUTEX;
  }

  /**
   * How many nodes the queue holds when each of {@code clients} clients has {@code perClient}
   * attempts on the lock (holding or waiting): one per attempt, or one per client under local
   * handoff.
   */
  int queueLength(int clients, int perClient) {
    return handsOffLocally() ? clients : clients * perClient;
  }
}

package io.lockstep.recipes.locks.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lockstep.recipes.locks.FencedLock;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.NonReentrantMutex;
import io.lockstep.recipes.locks.ReentrantMutex;
import io.lockstep.testing.ExclusionChecker;
import io.lockstep.testing.FencedStore;
import io.lockstep.testing.HoldListener;
import io.lockstep.testing.LockPart;
import io.lockstep.testing.LockThread.ThrowingRunnable;
import io.lockstep.testing.ZooKeeperExtension;
import io.lockstep.testkit.internal.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fencing rule across every kind of holder of one lock path, under session expiry and a server
 * restart: a hold's token is greater than every token handed out before its grant, to any holder,
 * local or not.
 *
 * <p>On one path, each with its own Curator client (its own "process"): two processes whose three
 * threads hand the lock among themselves (local handoff, {@link ReentrantMutex} and {@link
 * NonReentrantMutex}, bounds 2 and 3), one whose two threads hold plain {@code ReentrantMutex}es,
 * and one whose two threads hold Curator's {@code InterProcessMutex}. Each thread takes many short
 * holds and writes its token to a {@link FencedStore} twice while it holds; one hold in five writes
 * once more with its old token after it released, as soon as a later holder has written. Meanwhile
 * the harness expires the session of each kind of process, and restarts the server: all but one of
 * these faults are injected by a holder of the process itself, between its two writes, so that it
 * goes on writing as a holder paused through the fault would.
 *
 * <p>The history must show: no overlap of exclusive holds that counted ({@link ExclusionChecker});
 * tokens in hold order; no write refused while its hold counted (a refusal means a higher token was
 * accepted first, so a later hold's token was not greater, or two holds overlapped); every late
 * write refused (a later holder's greater token was accepted first).
 *
 * <p>Regression test of the breach of commit fdf077f: under local handoff, a local holder's token
 * was the zxid of a write of its process's node, minted after another process had queued, while
 * that other process's token was its node's czxid: tokens went down across processes.
 */
@Timeout(120)
class TokenOrderTest {
  @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();

  /** Budget of one acquire: a fault stalls the queue for a second or two at most. */
  private static final Duration ACQUIRE_BUDGET = Duration.ofSeconds(10);

  /** How long a late writer waits for a later holder to write before it gives up its late write. */
  private static final Duration LATE_WRITE_PATIENCE = Duration.ofSeconds(3);

  /** How long the lock may take to grant a phase's holds (a liveness failure beyond it). */
  private static final Duration PHASE_PATIENCE = Duration.ofSeconds(30);

  private static final int HOLDS_PER_PHASE = 120;
  private static final int WRITES_PER_HOLD = 2;
  private static final int LATE_WRITE_ONE_IN = 5;

  /** The least that each kind of holder must have done for the run to prove anything. */
  private static final int MIN_COUNTED_HOLDS_PER_PROCESS = 20;

  private static final int MIN_LOCAL_SUCCESSIONS = 10;
  private static final int MIN_LATE_WRITES = 20;

  private final ExclusionChecker checker = new ExclusionChecker();
  private final FencedStore store = new FencedStore();
  private final AtomicBoolean stopping = new AtomicBoolean();

  /** Numbers the holds in the order they began (before each is recorded in the checker). */
  private final AtomicLong holdsBegun = new AtomicLong();

  /** The highest number of a hold that wrote while it counted. */
  private final AtomicLong newestCountingWriter = new AtomicLong();

  private final Queue<String> refusedLegitimate = new ConcurrentLinkedQueue<>();
  private final Queue<String> lateAccepted = new ConcurrentLinkedQueue<>();
  private final Queue<String> errors = new ConcurrentLinkedQueue<>();
  private final LongAdder lateRefused = new LongAdder();
  private final LongAdder lateSkipped = new LongAdder();
  private final LongAdder acquireFailed = new LongAdder();
  private final LongAdder acquireTimedOut = new LongAdder();
  private final LongAdder noToken = new LongAdder();
  private final LongAdder curatorReleaseFailed = new LongAdder();
  private final LongAdder staleRefused = new LongAdder();
  private final LongAdder expiries = new LongAdder();
  private final LongAdder restarts = new LongAdder();
  private final LongAdder midHoldFaultsDone = new LongAdder();

  /** A fault that a holder of a process injects itself, between its two writes, and its outcome. */
  private record MidHoldFault(ThrowingRunnable action, CompletableFuture<Void> done) {}

  /** By process: the fault its next holder injects mid-hold. */
  private final ConcurrentMap<String, MidHoldFault> midHoldFaults = new ConcurrentHashMap<>();

  private String path;
  private List<LockPart> parts;

  @Test
  void mixedHoldersOfOnePath_underExpiryAndRestart_neverOverlap_andLaterHoldersFenceOutEarlier()
      throws Exception {
    path = zk.path("lock");
    parts = List.of(LockPart.mutex(path));
    long seed = System.nanoTime();
    System.out.println("TokenOrderTest seed " + seed);
    Random seeds = new Random(seed);

    CuratorFramework processA = zk.newClient();
    CuratorFramework processB = zk.newClient();
    CuratorFramework plain = zk.newClient();
    CuratorFramework curator = zk.newClient();
    List<Contender> contenders =
        List.of(
            lockstep("A/reentrant-1", processA, localMutex(processA, 2)),
            lockstep("A/reentrant-2", processA, localMutex(processA, 2)),
            lockstep("A/non-reentrant", processA, localNonReentrant(processA, 2)),
            lockstep("B/reentrant", processB, localMutex(processB, 3)),
            lockstep("B/non-reentrant-1", processB, localNonReentrant(processB, 3)),
            lockstep("B/non-reentrant-2", processB, localNonReentrant(processB, 3)),
            lockstep("plain/1", plain, new ReentrantMutex(plain, path)),
            lockstep("plain/2", plain, new ReentrantMutex(plain, path)),
            new CuratorContender("curator/1", curator),
            new CuratorContender("curator/2", curator));
    List<Thread> workers = new ArrayList<>();
    for (Contender contender : contenders) {
      Random random = new Random(seeds.nextLong());
      Thread worker = new Thread(() -> work(contender, random), "holder-" + contender.name());
      worker.setDaemon(true);
      workers.add(worker);
    }

    workers.forEach(Thread::start);
    try {
      awaitProgress("warm-up");
      duringAHoldOf("A", () -> expire(processA));
      awaitProgress("after A's session expired");
      duringAHoldOf("curator", () -> expire(curator));
      awaitProgress("after the Curator process's session expired");
      duringAHoldOf("B", () -> restartServer(List.of(processA, processB, plain, curator)));
      awaitProgress("after the server restarted");
      expire(plain); // whatever its threads are doing: waiting, most likely
      awaitProgress("after the plain process's session expired");
      duringAHoldOf("B", () -> expire(processB));
      awaitProgress("after B's session expired");
      duringAHoldOf("A", () -> expire(processA));
      awaitProgress("after A's session expired again");
    } finally {
      stopping.set(true);
      for (Thread worker : workers) {
        worker.join(TimeUnit.SECONDS.toMillis(30));
      }
    }
    assertThat(workers).as("workers still running").noneMatch(Thread::isAlive);

    Map<String, Integer> counted = countedHoldsByProcess();
    Map<String, Integer> successions = localSuccessions();
    System.out.printf(
        "TokenOrderTest: holds=%d counted=%s same-process-successions=%s expiries=%d"
            + " restarts=%d (mid-hold %d); stale writes refused=%d; late writes refused=%d"
            + " skipped=%d accepted=%d; acquires failed=%d timed-out=%d; no-token=%d"
            + " curator-release-failed=%d; highest token 0x%x%n",
        checker.holdCount(),
        counted,
        successions,
        expiries.sum(),
        restarts.sum(),
        midHoldFaultsDone.sum(),
        staleRefused.sum(),
        lateRefused.sum(),
        lateSkipped.sum(),
        lateAccepted.size(),
        acquireFailed.sum(),
        acquireTimedOut.sum(),
        noToken.sum(),
        curatorReleaseFailed.sum(),
        store.highest(path));
    List<String> overlaps = checker.overlaps();
    List<String> outOfOrder = checker.tokenOrderViolations();
    System.out.printf(
        "TokenOrderTest: violations: overlaps=%d tokens-out-of-order=%d legitimate-refused=%d"
            + " late-accepted=%d errors=%d%n",
        overlaps.size(),
        outOfOrder.size(),
        refusedLegitimate.size(),
        lateAccepted.size(),
        errors.size());
    overlaps.stream().limit(10).forEach(v -> System.out.println("TokenOrderTest: " + v));
    outOfOrder.stream().limit(10).forEach(v -> System.out.println("TokenOrderTest: " + v));
    refusedLegitimate.stream().limit(10).forEach(v -> System.out.println("TokenOrderTest: " + v));
    lateAccepted.stream().limit(10).forEach(v -> System.out.println("TokenOrderTest: " + v));
    errors.stream().limit(10).forEach(v -> System.out.println("TokenOrderTest: " + v));

    assertThat(errors).as("unexpected failures of the holders").isEmpty();
    assertThat(overlaps).as("overlapping exclusive holds that counted").isEmpty();
    assertThat(outOfOrder).as("tokens against hold order").isEmpty();
    assertThat(refusedLegitimate).as("writes refused while their hold counted").isEmpty();
    assertThat(lateAccepted).as("late writes with an old token, accepted").isEmpty();

    // The run was what it claims to be: the faults happened, every kind of holder held, local
    // handoff happened, and late writes were tried.
    assertThat(expiries.sum()).as("sessions expired").isEqualTo(5);
    assertThat(restarts.sum()).as("server restarts").isEqualTo(1);
    assertThat(midHoldFaultsDone.sum()).as("faults injected by a holder, mid-hold").isEqualTo(5);
    assertThat(counted)
        .as("counted holds per process")
        .containsOnlyKeys("A", "B", "plain", "curator")
        .allSatisfy(
            (process, holds) ->
                assertThat(holds)
                    .as(process)
                    .isGreaterThanOrEqualTo(MIN_COUNTED_HOLDS_PER_PROCESS));
    assertThat(successions)
        .as("holds of one process right after another of its holders'")
        .allSatisfy(
            (process, count) ->
                assertThat(count).as(process).isGreaterThanOrEqualTo(MIN_LOCAL_SUCCESSIONS));
    assertThat(lateRefused.sum()).as("late writes refused").isGreaterThanOrEqualTo(MIN_LATE_WRITES);
  }

  // ---- the holders ----

  /** One holder's lock, as its worker drives it. */
  private interface Contender {
    String name();

    CuratorFramework client();

    boolean acquire(Duration budget) throws Exception;

    /** The hold's fencing token, or 0 if the hold is already known lost (no token to write). */
    long token() throws Exception;

    /** Records in the checker that the hold begins now. */
    ExclusionChecker.Hold begin(long token, long session, boolean counting);

    /** Records in the checker that the hold ends now (before its release). */
    void end(ExclusionChecker.Hold hold);

    void release() throws Exception;
  }

  private ReentrantMutex localMutex(CuratorFramework client, int maxInARow) {
    return ReentrantMutex.builder(client, path).localHandoff(maxInARow).build();
  }

  private NonReentrantMutex localNonReentrant(CuratorFramework client, int maxInARow) {
    return NonReentrantMutex.builder(client, path).localHandoff(maxInARow).build();
  }

  private Contender lockstep(String name, CuratorFramework client, FencedLock lock) {
    return new LockstepContender(name, client, lock);
  }

  /**
   * A Lockstep lock: its token is {@code fencingToken()}, and what it tells its listeners (at risk,
   * lost, held again) pauses and resumes its hold in the checker.
   */
  private final class LockstepContender implements Contender {
    private final String name;
    private final CuratorFramework client;
    private final FencedLock lock;
    private final HoldListener listener = new HoldListener(checker);

    LockstepContender(String name, CuratorFramework client, FencedLock lock) {
      this.name = name;
      this.client = client;
      this.lock = lock;
      lock.getStateListenable().addListener(listener);
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public CuratorFramework client() {
      return client;
    }

    @Override
    public boolean acquire(Duration budget) throws InterruptedException {
      return lock.acquire(budget.toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public long token() {
      try {
        return lock.fencingToken();
      } catch (LockOwnershipLostException lost) {
        return 0;
      } catch (LockException failed) {
        return 0; // a local holder's write of the node failed under the fault
      }
    }

    @Override
    public ExclusionChecker.Hold begin(long token, long session, boolean counting) {
      return listener.begin(name, parts, token, session, counting);
    }

    @Override
    public void end(ExclusionChecker.Hold hold) {
      listener.end();
    }

    @Override
    public void release() {
      lock.release(); // never throws for a hold we have, lost or not
    }
  }

  /** Curator's mutex, which lets a subclass see its node: the proof that a token read is valid. */
  private static final class VisibleMutex extends InterProcessMutex {
    VisibleMutex(CuratorFramework client, String path) {
      super(client, path);
    }

    String node() {
      return getLockPath();
    }
  }

  /**
   * Curator's {@code InterProcessMutex}, which has no token: its holder takes the token a Curator
   * user would take beside Lockstep, the {@code pzxid} of the lock directory (the zxid of the last
   * change of its children) read right after the acquire returned, together with the children.
   *
   * <p>Why that is a valid token under the rule. Read in one reply with the children, the pzxid is
   * the state of the queue at one point of the server's history, and our node is in that list: we
   * hold at that point (we were granted and our node is still there), so every earlier holder's
   * node was gone by then. The last change of the children before the read is therefore at or after
   * the deletion of our predecessor's node, which comes after every earlier holder's last write:
   * after a plain holder's grant, and after each of a local-handoff place's writes of its node, the
   * zxids its local holders take as tokens. So the pzxid is greater than every earlier token. Every
   * later holder is granted after our node's deletion, which comes after our read, and takes its
   * token at or after that deletion: greater than ours. A read that does not list our node (our
   * session expired under us) gives no token: read then, the pzxid could be a later holder's. That
   * is why the stat comes with the children ({@code getChildren().storingStatIn}) rather than from
   * a bare {@code checkExists}: the same pzxid, plus the proof that we still held when it was read.
   */
  private final class CuratorContender implements Contender {
    private final String name;
    private final CuratorFramework client;
    private final VisibleMutex mutex;

    CuratorContender(String name, CuratorFramework client) {
      this.name = name;
      this.client = client;
      this.mutex = new VisibleMutex(client, path);
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public CuratorFramework client() {
      return client;
    }

    @Override
    public boolean acquire(Duration budget) throws Exception {
      return mutex.acquire(budget.toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public long token() throws Exception {
      Stat stat = new Stat();
      try {
        List<String> children = client.getChildren().storingStatIn(stat).forPath(path);
        return children.contains(ZKPaths.getNodeFromPath(mutex.node())) ? stat.getPzxid() : 0;
      } catch (KeeperException failed) {
        return 0; // connection or session lost under the fault
      }
    }

    @Override
    public ExclusionChecker.Hold begin(long token, long session, boolean counting) {
      return checker.begin(name, parts, token, session, counting);
    }

    @Override
    public void end(ExclusionChecker.Hold hold) {
      checker.end(hold);
    }

    @Override
    public void release() throws Exception {
      try {
        mutex.release();
      } catch (KeeperException failed) {
        // Curator's guaranteed delete goes on in the background; its lock data is already gone
        curatorReleaseFailed.increment();
      }
    }
  }

  // ---- the workers ----

  private void work(Contender contender, Random random) {
    while (!stopping.get()) {
      try {
        holdOnce(contender, random);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Exception | AssertionError e) {
        errors.add(contender.name() + ": " + e);
      }
    }
  }

  /**
   * One acquire, and if granted one hold: its token, two fenced writes, the release, and one time
   * in five a late write with the old token.
   */
  private void holdOnce(Contender contender, Random random) throws Exception {
    // A hold counts only if the client's session did not change across its acquire: the grant is
    // then in that session, which the harness records as ended before it expires it.
    long sessionBefore = Sessions.id(contender.client());
    boolean acquired;
    try {
      acquired = contender.acquire(ACQUIRE_BUDGET);
    } catch (LockException | KeeperException failed) {
      acquireFailed.increment(); // ZooKeeper unreachable beyond the client's retry policy
      return;
    }
    if (!acquired) {
      acquireTimedOut.increment();
      return;
    }
    long token;
    long lastBegunAtEnd;
    try {
      token = contender.token();
      if (token == 0) {
        noToken.increment();
        return;
      }
      long session = Sessions.id(contender.client());
      boolean counting = session != 0 && session == sessionBefore;
      long number = holdsBegun.incrementAndGet();
      ExclusionChecker.Hold hold = contender.begin(token, session, counting);
      try {
        for (int i = 0; i < WRITES_PER_HOLD; i++) {
          write(contender, hold, number, token);
          if (i == 0) {
            injectRequestedFault(contender);
          }
        }
      } finally {
        contender.end(hold);
      }
      lastBegunAtEnd = holdsBegun.get();
    } finally {
      contender.release();
    }
    if (random.nextInt(LATE_WRITE_ONE_IN) == 0) {
      writeLate(contender, token, lastBegunAtEnd);
    }
  }

  private void write(Contender contender, ExclusionChecker.Hold hold, long number, long token) {
    boolean accepted = store.write(path, token);
    // Counting after the write means counting at it: a hold pauses when told AT_RISK, and resumes
    // only if its node outlived the risk, during which nobody else could be granted.
    if (checker.isCounting(hold)) {
      newestCountingWriter.accumulateAndGet(number, Math::max);
      if (!accepted) {
        refusedLegitimate.add(
            String.format(
                "%s's write with token 0x%x refused (hold %d), highest 0x%x",
                contender.name(), token, number, store.highest(path)));
      }
    } else if (!accepted) {
      staleRefused.increment(); // its session ended under it, and a later holder wrote
    }
  }

  /**
   * If a fault was requested for the holder's process, injects it now, in the middle of the hold:
   * the holder then goes on as if it had been paused through the fault.
   */
  private void injectRequestedFault(Contender contender) {
    MidHoldFault fault = midHoldFaults.remove(process(contender.name()));
    if (fault != null) {
      try {
        fault.action().run();
        midHoldFaultsDone.increment();
        fault.done().complete(null);
      } catch (Exception | AssertionError e) {
        fault.done().completeExceptionally(e);
      }
    }
  }

  /**
   * Writes again with the old {@code token}, after a hold that began after this one ended wrote
   * while it counted: its token was greater, so the resource must refuse this one.
   */
  private void writeLate(Contender contender, long token, long lastBegunAtEnd) {
    try {
      await("a later holder's write")
          .atMost(LATE_WRITE_PATIENCE)
          .pollInSameThread()
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(2))
          .until(() -> newestCountingWriter.get() > lastBegunAtEnd || stopping.get());
    } catch (ConditionTimeoutException nobodyWrote) {
      lateSkipped.increment();
      return;
    }
    if (newestCountingWriter.get() <= lastBegunAtEnd) {
      lateSkipped.increment(); // the run is stopping
      return;
    }
    if (store.write(path, token)) {
      lateAccepted.add(
          String.format(
              "%s's late write with token 0x%x accepted after hold %d wrote",
              contender.name(), token, newestCountingWriter.get()));
    } else {
      lateRefused.increment();
    }
  }

  // ---- the faults ----

  /** Has the next holder of {@code process} inject {@code fault} in the middle of its hold. */
  private void duringAHoldOf(String process, ThrowingRunnable fault) throws Exception {
    MidHoldFault request = new MidHoldFault(fault, new CompletableFuture<>());
    midHoldFaults.put(process, request);
    request.done().get(PHASE_PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void restartServer(List<CuratorFramework> clients) throws Exception {
    zk.server().restart();
    restarts.increment();
    awaitConnected(clients);
  }

  /** Waits until the holders have begun another phase's worth of holds. */
  private void awaitProgress(String phase) {
    long target = holdsBegun.get() + HOLDS_PER_PHASE;
    await(HOLDS_PER_PHASE + " holds " + phase)
        .atMost(PHASE_PATIENCE)
        .pollInterval(Duration.ofMillis(20))
        .until(() -> holdsBegun.get() >= target);
  }

  private static void awaitConnected(List<CuratorFramework> clients) {
    await("clients connected")
        .atMost(PHASE_PATIENCE)
        .until(() -> clients.stream().allMatch(c -> c.getZookeeperClient().isConnected()));
  }

  /**
   * Expires the client's session on the server, as a long pause would. Its holds stop counting now:
   * the server deletes its node and grants the next waiter before its holders can be told.
   */
  private void expire(CuratorFramework client) throws Exception {
    awaitConnected(List.of(client));
    long session = Sessions.id(client);
    checker.sessionEnds(session);
    assertThat(Sessions.expire(client, zk.server().getConnectString()))
        .as("the session expired")
        .isEqualTo(session);
    expiries.increment();
  }

  // ---- what the history shows ----

  private static String process(String holder) {
    return holder.substring(0, holder.indexOf('/'));
  }

  /** The first counting stretch of each hold that counted, in the order they began. */
  private List<ExclusionChecker.Segment> countedHolds() {
    Set<Integer> seen = new HashSet<>();
    return checker.segments().stream()
        .sorted(Comparator.comparingLong(ExclusionChecker.Segment::start))
        .filter(segment -> seen.add(segment.hold()))
        .toList();
  }

  private Map<String, Integer> countedHoldsByProcess() {
    Map<String, Integer> counts = new TreeMap<>();
    countedHolds().forEach(hold -> counts.merge(process(hold.holder()), 1, Integer::sum));
    return counts;
  }

  /**
   * For each local-handoff process, how often a counted hold of one of its holders came right after
   * another of its holders' (the place handed on in memory, or given back and taken again at once).
   */
  private Map<String, Integer> localSuccessions() {
    Map<String, Integer> counts = new TreeMap<>(Map.of("A", 0, "B", 0));
    List<ExclusionChecker.Segment> holds = countedHolds();
    for (int i = 1; i < holds.size(); i++) {
      String previous = holds.get(i - 1).holder();
      String current = holds.get(i).holder();
      if (!previous.equals(current)
          && process(previous).equals(process(current))
          && counts.containsKey(process(current))) {
        counts.merge(process(current), 1, Integer::sum);
      }
    }
    return counts;
  }
}

package io.lockstep.recipes.leader;

import io.lockstep.recipes.internal.zk.PathArguments;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;

/**
 * A fenced leader election across processes, on ZooKeeper: the replacement for Curator's {@code
 * LeaderLatch} and {@code LeaderSelector}, on the same nodes, whose leaderships carry epochs.
 *
 * <p><b>Leading.</b> Each started election is one participant: one protected ephemeral sequential
 * node under the path. The participant whose node is first leads; it holds a {@link Leadership}
 * from its election until the leadership is lost (session expired, node deleted, client closed) or
 * given up ({@link Leadership#close()}, {@link #close()}). A leadership is owned by its handle, not
 * a thread. After a leadership ends, a started election re-enters the queue by itself, as Curator's
 * {@code LeaderLatch} does after a loss and its {@code LeaderSelector} with {@code autoRequeue()}.
 *
 * <p><b>Order.</b> First come, first elected: the queue is ordered by the nodes' sequence numbers,
 * exactly as Curator orders it, so Lockstep and Curator participants of one path and one {@link
 * LeaderLayout} elect one leader between them.
 *
 * <pre>{@code
 * import io.lockstep.recipes.leader.LeaderElection;
 * import io.lockstep.recipes.leader.Leadership;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * CuratorFramework client = ...; // a started client
 * FencedStore store = ...; // your store: refuses stale epochs (docs/getting-started.md)
 * try (LeaderElection election =
 *     LeaderElection.builder(client, "/services/billing/leader").participantId("host-1").build()) {
 *   election.start();
 *   Leadership leadership = election.awaitLeadership();
 *   store.write("schedule", "rebuilt", leadership.fencingToken()); // the epoch fences the write
 *   leadership.close(); // step down; the election queues again until closed
 * }
 * }</pre>
 *
 * <p><b>Failures.</b> While leading, the leadership's state follows the session: {@code AT_RISK}
 * while the connection is suspended, {@code LOST} once the session or the node is gone; {@link
 * LeadershipListener} hears each change, never on ZooKeeper's event thread. An attempt to enter the
 * queue that fails (ZooKeeper unreachable until the client's retry policy gave up) is tried again
 * after a backoff of at most 5 s, on a scheduler, with no thread parked; after the client is
 * closed, it is not.
 *
 * <p><b>Limits.</b> An election is not a JVM monitor: a paused leader can outlive its session and
 * act while another leads. Fence what matters with the leadership's epoch ({@link
 * Leadership#fencingToken()}) or guard ZooKeeper writes with {@link Leadership#ownershipChecks()}.
 */
public final class LeaderElection implements AutoCloseable {
  private final Election election;

  private LeaderElection(Election election) {
    this.election = election;
  }

  /**
   * Starts an election on {@code path}; nothing is sent to ZooKeeper until {@link #start()}.
   *
   * @param client a Curator client, started before first use; its retry policy, namespace and ACL
   *     provider apply
   * @param path the election path
   * @return a new builder
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code path} is not a valid absolute ZooKeeper path
   */
  public static Builder builder(CuratorFramework client, String path) {
    return new Builder(
        Objects.requireNonNull(client, "client"), PathArguments.absolutePath(path, "path"));
  }

  /**
   * The options of a {@link LeaderElection}: its participant id and node layout. Not thread-safe;
   * {@link #build()} makes the election.
   */
  public static final class Builder {
    private final CuratorFramework client;
    private final String path;
    private String participantId = "";
    private LeaderLayout layout = LeaderLayout.LEADER_LATCH;

    private Builder(CuratorFramework client, String path) {
      this.client = client;
      this.path = path;
    }

    /**
     * The id others read in {@link #participants()} (and Curator's {@code getParticipants()}): the
     * node's data, in UTF-8. Default: the empty id.
     *
     * @param participantId the id, possibly empty
     * @return this builder
     * @throws NullPointerException if {@code participantId} is null
     */
    public Builder participantId(String participantId) {
      this.participantId = Objects.requireNonNull(participantId, "participantId");
      return this;
    }

    /**
     * The nodes to keep: {@link LeaderLayout#LEADER_LATCH} (the default) or {@link
     * LeaderLayout#LEADER_SELECTOR}; every participant of the path must agree.
     *
     * @param layout the node layout
     * @return this builder
     * @throws NullPointerException if {@code layout} is null
     */
    public Builder layout(LeaderLayout layout) {
      this.layout = Objects.requireNonNull(layout, "layout");
      return this;
    }

    /**
     * Makes the election, not started. Nothing is sent to ZooKeeper.
     *
     * @return the election
     */
    public LeaderElection build() {
      return new LeaderElection(new Election(client, path, participantId, layout));
    }
  }

  /**
   * Enters the queue and returns at once; the election is decided in the background.
   *
   * @throws IllegalStateException if started already, or closed
   */
  public void start() {
    election.start();
  }

  /**
   * Leaves the election: gives up the leadership, or leaves the queue. Deletes the node before
   * returning while ZooKeeper is reachable (at most the client's connection timeout), else returns
   * at once and the deletion goes on in the background. Listeners hear {@code lost} of a leadership
   * given up this way. Closing again does nothing more; a close while another close, or the
   * leadership's {@link Leadership#close()}, is deleting the node waits for that deletion, as
   * bounded.
   */
  @Override
  public void close() {
    election.close();
  }

  /**
   * Whether this participant leads and its leadership is not at risk: false while the connection is
   * suspended, as Curator's {@code hasLeadership()} is.
   *
   * @return true if leading with a live connection
   */
  public boolean isLeader() {
    return election.isLeader();
  }

  /**
   * The current leadership, held or at risk, if this participant leads.
   *
   * @return the leadership, or empty
   */
  public Optional<Leadership> leadership() {
    return election.leadership();
  }

  /**
   * This participant's node, for reference only: while it leads (or may, at risk), its leadership's
   * node; while it waits, its node in the queue. Empty before {@link #start()}, after {@link
   * #close()}, and while it has no node: its create is under way, or its node was lost (session
   * expired, node deleted) and the next one is not made yet. A node says nothing of leadership
   * ({@link #leadership()} does), and it may be gone by the time the caller reads it: the path owns
   * nothing, and deleting the node is the election's business.
   *
   * @return the node's full path (a child of the election path), or empty
   */
  public Optional<String> nodePath() {
    return election.nodePath();
  }

  /**
   * Waits for this participant to lead, at most {@code timeout}, whatever the connection state.
   *
   * @param timeout the budget
   * @return the leadership, or empty if the budget ran out or the election closed meanwhile
   * @throws InterruptedException if interrupted while waiting
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   * @throws IllegalStateException if not started, or closed
   */
  public Optional<Leadership> awaitLeadership(Duration timeout) throws InterruptedException {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative: " + timeout);
    }
    long nanos;
    try {
      nanos = timeout.toNanos();
    } catch (ArithmeticException tooLong) {
      nanos = Long.MAX_VALUE;
    }
    CompletableFuture<Leadership> next = election.leadershipAsync();
    try {
      return Optional.of(next.get(nanos, TimeUnit.NANOSECONDS));
    } catch (TimeoutException | ExecutionException e) {
      return Optional.empty();
    } finally {
      next.cancel(false); // a copy: the election's own future is untouched
    }
  }

  /**
   * Waits as long as it takes for this participant to lead.
   *
   * @return the leadership
   * @throws InterruptedException if interrupted while waiting
   * @throws IllegalStateException if not started, or closed (also while waiting), or its client was
   *     closed
   */
  public Leadership awaitLeadership() throws InterruptedException {
    CompletableFuture<Leadership> next = election.leadershipAsync();
    try {
      return next.get();
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause().getMessage(), e.getCause());
    } finally {
      next.cancel(false);
    }
  }

  /**
   * Waits for this participant to lead, at most {@code timeout}: the name every recipe that hands
   * out holds gives its try form ({@code FencedLock.tryHold}, {@code CountingSemaphore.tryHold});
   * the same as {@link #awaitLeadership(Duration)}.
   *
   * @param timeout the budget
   * @return the leadership, or empty if the budget ran out or the election closed meanwhile
   * @throws InterruptedException if interrupted while waiting
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   * @throws IllegalStateException if not started, or closed
   */
  public Optional<Leadership> tryHold(Duration timeout) throws InterruptedException {
    return awaitLeadership(timeout);
  }

  /**
   * Waits as long as it takes for this participant to lead: the name every recipe that hands out
   * holds gives this form; the same as {@link #awaitLeadership()}.
   *
   * @return the leadership
   * @throws InterruptedException if interrupted while waiting
   * @throws IllegalStateException if not started, or closed (also while waiting), or its client was
   *     closed
   */
  public Leadership hold() throws InterruptedException {
    return awaitLeadership();
  }

  /**
   * The current leadership, or the next one. Completes on a Lockstep thread, never ZooKeeper's;
   * cancelling it does not leave the election.
   *
   * @return completes with the leadership; fails with {@link IllegalStateException} if the election
   *     or its client is closed first
   * @throws IllegalStateException if not started, or closed
   */
  public CompletionStage<Leadership> leadershipAsync() {
    return election.leadershipAsync();
  }

  /**
   * Reads the participants of the path, in queue order, as Curator's {@code getParticipants()}
   * does: one read of the children, one read per node; the first node found leads. Costs requests
   * and waits for them, with the client's retry policy.
   *
   * @return the participants, the leader first; empty if nobody takes part
   * @throws io.lockstep.recipes.locks.LockException if ZooKeeper could not be read
   * @throws IllegalStateException if closed
   */
  public List<Participant> participants() {
    return election.participants();
  }

  /**
   * Adds a listener of this participant's leaderships; see {@link LeadershipListener} for the
   * thread and order of its callbacks.
   *
   * @param listener the listener
   * @throws NullPointerException if {@code listener} is null
   * @throws IllegalStateException if closed
   */
  public void addListener(LeadershipListener listener) {
    election.addListener(Objects.requireNonNull(listener, "listener"));
  }

  /**
   * Removes a listener; it may still hear a callback already under way.
   *
   * @param listener the listener
   */
  public void removeListener(LeadershipListener listener) {
    election.removeListener(listener);
  }

  @Override
  public String toString() {
    return "LeaderElection[" + election.path() + "]";
  }
}

package io.lockstep.recipes.leader.compat;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.LeaderLayout;
import io.lockstep.recipes.leader.Leadership;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.Participant;

/**
 * Curator's {@code LeaderLatch}, by an import change: the same constructors and methods, Curator's
 * own {@link LeaderLatchListener}, on the nodes Curator's latches make (so Curator's latches and
 * these on one path elect one leader between them), run by {@link LeaderElection}'s engine, and
 * with the epoch Curator's latch lacks ({@link #leadership()}, {@link #epoch()}).
 *
 * <pre>{@code
 * import io.lockstep.recipes.leader.compat.LeaderLatch;
 * import org.apache.curator.framework.CuratorFramework;
 *
 * CuratorFramework client = ...; // a started client
 * LeaderLatch latch = new LeaderLatch(client, "/services/billing/latch", "host-1");
 * latch.start();
 * latch.await();
 * long epoch = latch.epoch(); // fences what this leader writes
 * latch.close();
 * }</pre>
 *
 * <p><b>Leading.</b> {@link #hasLeadership()} is true while this participant leads with its
 * connection up, as Curator's is; while the connection is suspended it is false and listeners hear
 * {@code notLeader()}, and {@code isLeader()} again if the connection comes back in time. After a
 * lost leadership the latch queues again by itself, as Curator's does. Listeners never run on
 * ZooKeeper's event thread: on Lockstep's threads, or on the executor given with them; so a {@code
 * notLeader()} that {@link #close(CloseMode)} causes may come after it returns (Curator's comes
 * before, in the closing thread).
 *
 * <p><b>Differences from Curator's.</b> A leader whose node is deleted (by an operator, say) stops
 * leading ({@code notLeader()}) and queues again; Curator's watches no node of its own while it
 * leads and goes on leading beside the participant the deletion elected. The client's {@code
 * ConnectionStateErrorPolicy} is not consulted: a suspended connection stops the leadership even
 * under {@code SessionConnectionStateErrorPolicy}, under which Curator's latch leads on until the
 * session is lost.
 *
 * <p><b>Thread safety.</b> Safe for use by any number of threads.
 *
 * @see LeaderElection
 */
public final class LeaderLatch implements Closeable {
  /** Where a latch is in its life, as Curator's {@code LeaderLatch.State}. */
  public enum State {
    /** Made, not started. */
    LATENT,
    /** Started: in the election. */
    STARTED,
    /** Closed: out of the election for good. */
    CLOSED
  }

  /** Whether closing a leading latch tells its listeners {@code notLeader()}. */
  public enum CloseMode {
    /** Listeners hear nothing at close. */
    SILENT,
    /** A leading latch's listeners hear {@code notLeader()} at close. */
    NOTIFY_LEADER
  }

  private final LeaderElection election;
  private final CuratorFramework client;
  private final String latchPath;
  private final String id;
  private final CloseMode closeMode;
  private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
  private final Map<LeaderLatchListener, LatchListener> listeners = new ConcurrentHashMap<>();
  private final LeadingSignal leading = new LeadingSignal(); // what await() waits for
  private final LastLeaderNode lastLeaderNode;

  /**
   * A latch with an empty participant id.
   *
   * @param client a Curator client, started before first use
   * @param latchPath the election path
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code latchPath} is not a valid absolute ZooKeeper path
   */
  public LeaderLatch(CuratorFramework client, String latchPath) {
    this(client, latchPath, "", CloseMode.SILENT);
  }

  /**
   * A latch with participant id {@code id}.
   *
   * @param client a Curator client, started before first use
   * @param latchPath the election path
   * @param id this participant's id, as {@link #getParticipants()} lists it
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code latchPath} is not a valid absolute ZooKeeper path
   */
  public LeaderLatch(CuratorFramework client, String latchPath, String id) {
    this(client, latchPath, id, CloseMode.SILENT);
  }

  /**
   * A latch with participant id {@code id} whose {@link #close()} follows {@code closeMode}.
   *
   * @param client a Curator client, started before first use
   * @param latchPath the election path
   * @param id this participant's id, as {@link #getParticipants()} lists it
   * @param closeMode what {@link #close()} tells listeners
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code latchPath} is not a valid absolute ZooKeeper path
   */
  public LeaderLatch(CuratorFramework client, String latchPath, String id, CloseMode closeMode) {
    this.client = client;
    this.latchPath = latchPath;
    this.id = Objects.requireNonNull(id, "id");
    this.closeMode = Objects.requireNonNull(closeMode, "closeMode");
    this.election =
        LeaderElection.builder(client, latchPath)
            .participantId(id)
            .layout(LeaderLayout.LEADER_LATCH)
            .build();
    // First: it has heard a change before any user listener.
    election.addListener(new LatchListener(leading, Runnable::run, false));
    this.lastLeaderNode = new LastLeaderNode(election);
    election.addListener(lastLeaderNode);
  }

  /**
   * Enters the election.
   *
   * @throws IllegalStateException if already started or closed
   */
  public void start() {
    if (!state.compareAndSet(State.LATENT, State.STARTED)) {
      throw new IllegalStateException("Cannot be started more than once");
    }
    election.start();
  }

  /**
   * Leaves the election, telling listeners as the constructor's close mode says.
   *
   * @throws IOException never: declared as Curator's {@code close()} declares it, so that code
   *     catching it compiles unchanged
   * @throws IllegalStateException if not started, or closed already
   */
  @Override
  public void close() throws IOException {
    close(closeMode);
  }

  /**
   * Leaves the election; a leading latch's node goes before this returns (while connected), and its
   * listeners hear {@code notLeader()} if {@code closeMode} is {@link CloseMode#NOTIFY_LEADER}.
   *
   * @param closeMode what to tell listeners
   * @throws NullPointerException if {@code closeMode} is null
   * @throws IOException never: declared as Curator's {@code close(CloseMode)} declares it
   * @throws IllegalStateException if not started, or closed already
   */
  public void close(CloseMode closeMode) throws IOException {
    Objects.requireNonNull(closeMode, "closeMode");
    if (!state.compareAndSet(State.STARTED, State.CLOSED)) {
      throw new IllegalStateException("Already closed or has not been started");
    }
    if (closeMode == CloseMode.SILENT) {
      listeners.values().forEach(election::removeListener); // a leader's notLeader() goes unsaid
    }
    lastLeaderNode.keepCurrent(); // a leader's node, whether or not its listener ran yet
    election.close(); // a leader's listeners left hear notLeader(), on their thread
    leading.closed();
  }

  /**
   * Waits until this latch leads. As Curator's, a latch that leads returns at once, even with the
   * thread's interrupt flag set (it stays set).
   *
   * @throws InterruptedException if interrupted while waiting (the flag is cleared)
   * @throws EOFException if the latch is not started, or closed (also while waiting), as Curator's
   */
  public void await() throws InterruptedException, EOFException {
    if (state.get() == State.LATENT) {
      throw new EOFException("LeaderLatch on " + latchPath + " was not started");
    }
    if (!leading.await(this::hasLeadership, -1)) {
      throw new EOFException("LeaderLatch on " + latchPath + " closed while waiting");
    }
  }

  /**
   * Waits until this latch leads, at most {@code timeout}.
   *
   * @param timeout how long at most, in {@code unit}
   * @param unit the unit of {@code timeout}
   * @return true if this latch leads; false if the time ran out, or the latch is not started or
   *     closed (as Curator's); with no time left it answers without waiting, whatever the thread's
   *     interrupt flag (it stays set)
   * @throws InterruptedException if interrupted while waiting (the flag is cleared)
   * @throws NullPointerException if {@code unit} is null
   */
  public boolean await(long timeout, TimeUnit unit) throws InterruptedException {
    Objects.requireNonNull(unit, "unit");
    return await(Duration.ofNanos(unit.toNanos(Math.max(0, timeout))));
  }

  /**
   * Waits until this latch leads, at most {@code timeout}: {@link #await(long, TimeUnit)} with a
   * {@link Duration}.
   *
   * @param timeout how long at most
   * @return true if this latch leads; false if the time ran out, or the latch is not started or
   *     closed
   * @throws InterruptedException if interrupted while waiting (the flag is cleared)
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   */
  public boolean await(Duration timeout) throws InterruptedException {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative: " + timeout);
    }
    if (state.get() == State.LATENT) {
      return false;
    }
    // Saturates: a timeout too long to count in nanoseconds is as good as forever.
    return leading.await(this::hasLeadership, TimeUnit.NANOSECONDS.convert(timeout));
  }

  /**
   * Whether this latch leads now, with its connection up.
   *
   * @return true while this latch leads
   */
  public boolean hasLeadership() {
    return state.get() == State.STARTED && election.isLeader();
  }

  /**
   * This participant's id, as given at construction.
   *
   * @return the id
   */
  public String getId() {
    return id;
  }

  /**
   * Where the latch is in its life.
   *
   * @return the state
   */
  public State getState() {
    return state.get();
  }

  /**
   * This latch's node, as Curator's latch names it: a child of the latch path, while in the queue
   * or leading; null before start, after close, and while the latch has none (its node was lost or
   * deleted and the next is not made yet). For reference only: the node may be gone by the time the
   * caller reads it, and having one does not mean leading.
   *
   * @return the node's full path, or null
   */
  public String getOurPath() {
    return election.nodePath().orElse(null);
  }

  /**
   * The node this latch last led with, as Curator's latch names it: kept after that leadership and
   * the latch end; null if the latch never led. For reference only: the node may be gone.
   *
   * @return the node's full path, or null
   */
  public String getLastPathIsLeader() {
    return lastLeaderNode.get();
  }

  /**
   * The current leadership, with its epoch: empty while this latch does not lead.
   *
   * @return the leadership, if this latch leads (or may, while its connection is suspended)
   */
  public Optional<Leadership> leadership() {
    return state.get() == State.STARTED ? election.leadership() : Optional.empty();
  }

  /**
   * The epoch of the current leadership: greater than every earlier leader's, Curator's latches
   * included, so a store that refuses smaller epochs refuses a deposed leader.
   *
   * @return the epoch
   * @throws IllegalStateException if this latch does not lead
   */
  public long epoch() {
    return leadership()
        .orElseThrow(() -> new IllegalStateException("This latch does not lead"))
        .fencingToken();
  }

  /**
   * Adds a listener; its callbacks run on Lockstep's threads, one at a time, never on ZooKeeper's.
   *
   * @param listener told {@code isLeader()} when this latch starts leading and {@code notLeader()}
   *     when it stops
   * @throws NullPointerException if {@code listener} is null
   */
  public void addListener(LeaderLatchListener listener) {
    addListener(listener, Runnable::run);
  }

  /**
   * Adds a listener whose callbacks run on {@code executor}. As Curator's: a listener added again
   * is not told twice, and its callbacks run on the executor given last; what a callback throws is
   * logged, in the executor's task; a listener added to a closed latch is taken and never told.
   *
   * @param listener told {@code isLeader()} when this latch starts leading and {@code notLeader()}
   *     when it stops
   * @param executor runs the callbacks
   * @throws NullPointerException if an argument is null
   */
  public void addListener(LeaderLatchListener listener, Executor executor) {
    Objects.requireNonNull(listener, "listener");
    Objects.requireNonNull(executor, "executor");
    // Added while leading: it hears notLeader() when the leadership ends, as Curator's does.
    LatchListener adapter = new LatchListener(listener, executor, hasLeadership());
    LatchListener present = listeners.putIfAbsent(listener, adapter);
    if (present != null) {
      present.runOn(executor);
      return;
    }
    try {
      election.addListener(adapter);
    } catch (IllegalStateException closed) {
      if (state.get() != State.CLOSED) {
        throw closed;
      }
    }
  }

  /**
   * Removes a listener added before; nothing happens if it was not.
   *
   * @param listener the listener
   */
  public void removeListener(LeaderLatchListener listener) {
    LatchListener adapter = listeners.remove(listener);
    if (adapter != null) {
      election.removeListener(adapter);
    }
  }

  /**
   * The participants in queue order, the leader first, read from ZooKeeper as Curator's latch reads
   * them (Curator's latches on the path included).
   *
   * @return the participants, with Curator's {@link Participant}
   */
  public Collection<Participant> getParticipants() {
    return CuratorParticipants.of(election, this::reader);
  }

  /** An election that only reads the path's participants: a closed latch still reads them. */
  private LeaderElection reader() {
    return LeaderElection.builder(client, latchPath).layout(LeaderLayout.LEADER_LATCH).build();
  }

  /**
   * The leader, as Curator's latch names it; a participant with an empty id and no leadership if
   * nobody leads.
   *
   * @return the leader
   */
  public Participant getLeader() {
    return CuratorParticipants.leaderOf(getParticipants());
  }

  @Override
  public String toString() {
    return "LeaderLatch[" + id + ", " + state.get() + ", " + election + "]";
  }
}

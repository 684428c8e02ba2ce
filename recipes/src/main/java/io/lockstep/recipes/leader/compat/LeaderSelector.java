package io.lockstep.recipes.leader.compat;

import io.lockstep.recipes.leader.LeaderElection;
import io.lockstep.recipes.leader.LeaderLayout;
import io.lockstep.recipes.leader.Leadership;
import java.io.Closeable;
import java.util.Collection;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.CancelLeadershipException;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListener;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.CloseableExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Curator's {@code LeaderSelector}, by an import change: the same constructors and methods,
 * Curator's own {@link LeaderSelectorListener} (so {@code LeaderSelectorListenerAdapter} and its
 * {@code CancelLeadershipException} work unchanged), on the {@code lock-} queue Curator's selectors
 * use (so Curator's selectors and these on one path elect one leader between them), run by {@link
 * LeaderElection}'s engine, and with the epoch Curator's selector lacks ({@link #leadership()},
 * {@link #epoch()}).
 *
 * <pre>{@code
 * import io.lockstep.recipes.leader.compat.LeaderSelector;
 * import org.apache.curator.framework.CuratorFramework;
 * import org.apache.curator.framework.recipes.leader.CancelLeadershipException;
 * import org.apache.curator.framework.recipes.leader.LeaderSelectorListener;
 *
 * CuratorFramework client = ...; // a started client
 * LeaderSelectorListener listener = ...; // yours, as for Curator's selector
 * LeaderSelector selector = new LeaderSelector(client, "/services/billing/leader", listener);
 * selector.setId("host-1");
 * selector.autoRequeue();
 * selector.start();
 * }</pre>
 *
 * <p><b>Leading.</b> When this participant is elected, {@code takeLeadership(client)} runs on the
 * selector's executor (a thread of its own by default, as Curator's); leadership ends when it
 * returns or throws, and the selector then queues again if {@link #autoRequeue()} was called, or
 * when {@link #requeue()} is. The listener also hears the client's connection states, as Curator's
 * does: {@code LeaderSelectorListenerAdapter} throws {@code CancelLeadershipException} on SUSPENDED
 * and LOST, and the selector then cancels its election, as Curator 5.9.0's: the leader's {@code
 * takeLeadership} is interrupted (elected, it begins interrupted, as after {@link
 * #interruptLeadership()}); a waiting selector leaves the queue, and with {@code autoRequeue}
 * queues again at the back (without, {@link #requeue()} queues it again). {@link #close()}
 * interrupts the leader's thread too. {@link #hasLeadership()} is true from the election on, before
 * {@code takeLeadership} begins, as Curator's.
 *
 * <p><b>Differences.</b> While waiting (not leading), a selector whose session was lost and whose
 * listener did not cancel queues again on its new session by itself, with or without {@code
 * autoRequeue}. Elected after the caller shut its executor down, a selector cannot run {@code
 * takeLeadership}: it logs a warning and leaves the election, so that the next participant leads.
 * {@code getParticipants()} and {@code getLeader()} declare no checked exception.
 *
 * <p><b>Thread safety.</b> Safe for use by any number of threads.
 *
 * @see LeaderElection
 */
public final class LeaderSelector implements Closeable {
  private static final Logger log = LoggerFactory.getLogger(LeaderSelector.class);
  private static final AtomicInteger threadNumber = new AtomicInteger();

  private enum State {
    LATENT,
    STARTED,
    CLOSED
  }

  private final CuratorFramework client;
  private final String leaderPath;
  private final LeaderSelectorListener listener;
  private final CloseableExecutorService executor;
  private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
  private final ConnectionStateListener connectionStates;
  private volatile boolean autoRequeue;
  private volatile String id = "";
  private final SelectorTurns turns;
  private final SelectorQueue queue;

  /**
   * A selector whose {@code takeLeadership} runs on a thread of its own.
   *
   * @param client a Curator client, started before first use
   * @param leaderPath the election path
   * @param listener told when to lead, and of the client's connection states
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code leaderPath} is not a valid absolute ZooKeeper path
   */
  public LeaderSelector(
      CuratorFramework client, String leaderPath, LeaderSelectorListener listener) {
    this(client, leaderPath, ownThread(), listener);
  }

  /**
   * A selector whose {@code takeLeadership} runs on {@code executorService}, which stays the
   * caller's: {@link #close()} cancels the selector's task on it and does not shut it down.
   *
   * @param client a Curator client, started before first use
   * @param leaderPath the election path
   * @param executorService runs {@code takeLeadership}
   * @param listener told when to lead, and of the client's connection states
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code leaderPath} is not a valid absolute ZooKeeper path
   */
  public LeaderSelector(
      CuratorFramework client,
      String leaderPath,
      ExecutorService executorService,
      LeaderSelectorListener listener) {
    this(
        client,
        leaderPath,
        new CloseableExecutorService(Objects.requireNonNull(executorService, "executorService")),
        listener);
  }

  /**
   * A selector whose {@code takeLeadership} runs on {@code executorService}; {@link #close()}
   * closes it.
   *
   * @param client a Curator client, started before first use
   * @param leaderPath the election path
   * @param executorService runs {@code takeLeadership}
   * @param listener told when to lead, and of the client's connection states
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code leaderPath} is not a valid absolute ZooKeeper path
   */
  public LeaderSelector(
      CuratorFramework client,
      String leaderPath,
      CloseableExecutorService executorService,
      LeaderSelectorListener listener) {
    this.client = Objects.requireNonNull(client, "client");
    this.leaderPath = Objects.requireNonNull(leaderPath, "leaderPath");
    this.executor = Objects.requireNonNull(executorService, "executorService");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.turns =
        new SelectorTurns(
            task -> {
              var unused = executor.submit(task); // lead() logs what takeLeadership throws
            },
            this::lead,
            this::refused);
    this.queue = new SelectorQueue(turns, this::newElection, this::join);
    LeaderElection.builder(client, leaderPath); // checks the path now, as the constructor should
    this.connectionStates =
        (c, newState) -> {
          try {
            listener.stateChanged(c, newState);
          } catch (CancelLeadershipException cancel) { // the adapter's, on SUSPENDED and LOST
            queue.cancel(autoRequeue);
          }
        };
  }

  /** A selector's own executor: one daemon thread, closed with the selector, as Curator's. */
  private static CloseableExecutorService ownThread() {
    return new CloseableExecutorService(
        Executors.newSingleThreadExecutor(
            task -> {
              Thread thread = new Thread(task, "LeaderSelector-" + threadNumber.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            }),
        true);
  }

  /** After a leadership ends, queue again by itself, as Curator's {@code autoRequeue()}. */
  public void autoRequeue() {
    autoRequeue = true;
  }

  /**
   * Sets the participant id the next queued node carries (call it before {@link #start()}).
   *
   * @param id the id, as {@link #getParticipants()} lists it
   * @throws NullPointerException if {@code id} is null
   */
  public void setId(String id) {
    this.id = Objects.requireNonNull(id, "id");
  }

  /**
   * The participant id.
   *
   * @return the id, empty unless set
   */
  public String getId() {
    return id;
  }

  /**
   * Enters the election; returns at once.
   *
   * @throws IllegalStateException if already started or closed
   * @throws java.util.concurrent.RejectedExecutionException if the executor refuses a task (it was
   *     shut down), as Curator's start throws; the selector is not queued
   */
  public void start() {
    if (!state.compareAndSet(State.LATENT, State.STARTED)) {
      throw new IllegalStateException("Cannot be started more than once");
    }
    client.getConnectionStateListenable().addListener(connectionStates);
    requeue();
  }

  /**
   * Queues this selector again, unless it is queued or leading.
   *
   * @return true if it was queued now; false if it was queued or leading already
   * @throws IllegalStateException if not started, or closed
   * @throws java.util.concurrent.RejectedExecutionException if the executor refuses a task (it was
   *     shut down), as Curator's requeue throws; the selector is not queued
   */
  public boolean requeue() {
    return queue.requeue(() -> state.get() == State.STARTED);
  }

  /** A new election, built once the executor took a task, as Curator's start and requeue submit. */
  private LeaderElection newElection() {
    var unused = executor.submit(() -> {}); // a shut-down executor refuses it: nothing is queued
    return LeaderElection.builder(client, leaderPath)
        .participantId(id)
        .layout(LeaderLayout.LEADER_SELECTOR)
        .build();
  }

  private void join(LeaderElection election) {
    election.addListener(turns.electing(election, () -> state.get() == State.STARTED));
    election.start();
  }

  /**
   * Whether this selector leads: from its election, as Curator's, until its {@code takeLeadership}
   * ended.
   *
   * @return true while this selector leads
   */
  public boolean hasLeadership() {
    return turns.leading() != null || queue.elected() != null;
  }

  /**
   * Interrupts the thread running {@code takeLeadership}; once elected, before it runs, it begins
   * interrupted (as Curator's, whose thread is interrupted on its way to it).
   */
  public void interruptLeadership() {
    queue.interrupt();
  }

  /**
   * The current leadership, with its epoch: empty while this selector does not lead.
   *
   * @return the leadership {@code takeLeadership} runs for, if any
   */
  public Optional<Leadership> leadership() {
    return Optional.ofNullable(turns.leading());
  }

  /**
   * The epoch of the current leadership: greater than every earlier leader's, Curator's selectors
   * included.
   *
   * @return the epoch
   * @throws IllegalStateException if this selector does not lead
   */
  public long epoch() {
    return leadership()
        .orElseThrow(() -> new IllegalStateException("This selector does not lead"))
        .fencingToken();
  }

  /**
   * The participants in queue order, the leader first, read from ZooKeeper as Curator's selector
   * reads them (Curator's selectors on the path included).
   *
   * @return the participants, with Curator's {@link Participant}
   */
  public Collection<Participant> getParticipants() {
    return CuratorParticipants.ofSelector(client, leaderPath, queue.queued());
  }

  /**
   * The leader; a participant with an empty id and no leadership if nobody leads.
   *
   * @return the leader
   */
  public Participant getLeader() {
    return CuratorParticipants.leaderOf(getParticipants());
  }

  /**
   * Leaves the election for good: interrupts the leader's thread, gives the leadership up (its node
   * is gone before this returns while ZooKeeper is reachable, and so is the node of an election a
   * finished {@code takeLeadership} was leaving), closes the executor as the constructor said.
   *
   * @throws IllegalStateException if not started, or closed already, as Curator's selector throws
   */
  @Override
  public void close() {
    queue.close(
        () -> state.compareAndSet(State.STARTED, State.CLOSED),
        () -> {
          client.getConnectionStateListenable().removeListener(connectionStates);
          executor.close();
        });
  }

  @Override
  public String toString() {
    return "LeaderSelector[" + leaderPath + ", " + id + ", " + state.get() + "]";
  }

  /**
   * The executor refused the turn of a leadership {@code election} elected. Unless the selector
   * closed meanwhile (its close leaves the election), the caller shut the executor down: the
   * selector leaves, so that the next participant leads, rather than keep a leadership whose {@code
   * takeLeadership} cannot run.
   */
  private void refused(LeaderElection election, RuntimeException refusal) {
    if (state.get() == State.STARTED) {
      log.warn(
          "LeaderSelector on {}: its executor refused takeLeadership ({}): leaving the election",
          leaderPath,
          refusal.toString());
      queue.leaveInBackground(election);
    }
  }

  /**
   * Runs {@code takeLeadership} for {@code leadership}, unless it ended before its turn came; when
   * it ends, leaves or requeues: with {@code autoRequeue}, a leadership elected meanwhile leads
   * next; without, the election is left, that leadership with it.
   */
  private void lead(LeaderElection election, Leadership leadership) {
    if (state.get() == State.STARTED && queue.begin(election, leadership)) {
      try {
        listener.takeLeadership(client);
      } catch (InterruptedException e) {
        log.debug("LeaderSelector on {}: takeLeadership interrupted", leaderPath);
      } catch (Exception | Error e) {
        log.error("LeaderSelector on {}: takeLeadership failed", leaderPath, e);
      } finally {
        turns.end();
      }
    }
    if (autoRequeue && state.get() == State.STARTED) {
      leadership.close(); // the election queues again by itself
      turns.ended(null);
      return;
    }
    queue.leave(election);
    turns.ended(election);
  }
}

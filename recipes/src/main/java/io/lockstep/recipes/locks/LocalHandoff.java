package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.local.LocalPlace;
import io.lockstep.recipes.internal.queue.Slot;
import java.time.Duration;
import java.util.Objects;

/**
 * What a lock built with {@code localHandoff} or {@code linger} does (cohort locking, lock
 * caching): the bound's default, the longest linger, and the rules. Not instantiable; it exists to
 * document the options in one place.
 *
 * <p><b>Order.</b> All lock objects of one Curator client on one path built with local handoff
 * share one place in the lock's queue: one node for the process. While the process holds, its local
 * contenders take turns in memory, in arrival order; the node goes back through ZooKeeper (deleted,
 * and created again at the tail if local contenders still wait) when none waits, or after the bound
 * of handoffs in a row while another participant may wait behind it. The process learns that
 * someone waits from ZooKeeper, and a watch tells it a notification after the fact, by which time
 * tens of local handoffs can have gone by. So the hold that reaches the bound reads the queue (one
 * {@code getChildren}, sent while it holds), and the next local handoff waits for the answer: if
 * the process's node is still alone, a new run of handoffs begins; if anyone else is there, the
 * node goes back. Someone who queued just after one such read is found by the next, so another
 * process sits through at most the hold in progress and the bound's number of local handoffs after
 * its node is created: about that many more holds than with Curator's strict order.
 *
 * <p><b>Cost.</b> A local handoff sends nothing to ZooKeeper; while the process is alone, the read
 * at each bound is one request per bound's worth of handoffs.
 *
 * <p><b>Fencing.</b> As for every lock, a hold's fencing token is greater than every token handed
 * out before its grant, to any holder, local or not, and its ownership checks commit only while it
 * holds. A local hold takes its token and checks when it first asks for either: the first hold of a
 * place gets the place's grant token; a later one gets the freshest token for free if no earlier
 * hold of the place took it, and otherwise writes the node once (a {@code setData} with the data it
 * has) and gets that write's zxid. Its checks require the node's version at that moment: when a
 * hold that took checks lets go, the next local handoff first writes the node, so those checks fail
 * before anyone else holds (and that write's zxid is the next hold's token, at no cost). Another
 * process is granted the lock only after the place's node is deleted, with a token taken at that
 * deletion or later, so it outranks every local token. A local hold's {@code fencingToken()} or
 * {@code ownershipChecks()} that needs the write waits for its answer, at most the client's
 * connection timeout, and then throws {@link LockException}.
 *
 * <p><b>What stays.</b> Other processes, Curator's included, see an ordinary node in Curator's
 * queue and exclude it as before. Loss, at-risk and the state listeners behave as without local
 * handoff: the holder hears what happens to the process's node; when it is lost, local waiters take
 * a new place. While the connection is suspended nothing is handed on (nor joined, for readers):
 * the session may have ended on the server and another process hold, so local waiters wait until
 * the node is held again, or take a new place once it is lost. One difference: a local hold that
 * has not taken its token yet (it is taken when first asked for, see <i>Fencing</i>) is reported to
 * listeners and observers with token 0 until it does; the place's first hold, and a hold handed a
 * token nobody took, have theirs from the grant. A {@link LockInspector} sees the process's node,
 * not its local waiters. Revocation is not offered: its request names a node, which here is the
 * process's.
 *
 * <p><b>Read sharing ({@link ReadWriteMutex}).</b> A read-write lock built with local handoff hands
 * its write lock on as above, and its process's readers hold together on one read node: the first
 * reader queues it, readers arriving while it waits are granted with it, and readers arriving while
 * it holds join at once, in memory; the node is deleted when the last of them lets go. Readers stop
 * joining while a writer of this process waits, and once a read of the queue finds a write node
 * (that read goes out after the bound of joins in a row, the next reader waiting for its answer,
 * and when the granting read's child watch fires); readers arriving then wait, and queue a new read
 * node behind the writer, unless it gives up first: while they wait the queue is read again with a
 * child watch, and once no write node is left they join. So a writer of another process waits for
 * the reads under way and at most the bound's number of joins after its node is created. A reader
 * granted with the node has the grant's token; a reader that joined later, and any reader asking
 * for ownership checks, takes a read node of its own when it first asks: tied to the shared node
 * (created in one transaction with a check of it, and standing at its place in the queue, so
 * granted at once), its token is greater than every token handed out before, and its checks commit
 * while that reader holds, not after, whatever the other readers do. It costs a create and a read,
 * and a delete at the release. A downgrade ties a read node of its own to the write node, and the
 * write node then goes back through ZooKeeper at the writer's release instead of passing to the
 * next local writer, who queues behind the downgraded reader. With {@code linger}, the read node is
 * kept with no reader as a mutex's place is (below), and also goes back as soon as a writer of this
 * process waits.
 *
 * <p><b>Linger (lock caching).</b> A lock built with {@code linger(d)} keeps the process's place
 * for up to {@code d} after the last local release, with no local contender waiting, while no other
 * participant queues: an acquire in that time holds at once, in memory, with no request (a hold
 * that asks for its token pays one write if an earlier hold took the place's, as above). The place
 * is kept only while the child watch left by the read that granted it is armed, so the process
 * hears the next participant queue at no cost; when it does, the place goes back at once if no
 * local contender holds, else at the release (within the bound if local contenders wait). So
 * another process, Curator's included, waits at most one notification and one delete longer than
 * without linger, and is never starved. The place also goes back when the linger runs out, when its
 * connection is suspended, and when it is lost or its client closes. When the process sees another
 * participant (a place granted behind someone or not alone, the child watch, a read at the bound
 * that finds someone), the place is not kept for a pause: the linger itself, doubled at each
 * sighting while a pause is under way, up to 64 times the linger, and back to the linger at a
 * sighting after a pause ran out; in the pause the last release gives the place back as without
 * linger, so processes that take turns pay no more than without it, and a process alone never
 * pauses. Nobody else holds while a place lingers (its node is first in the queue), and a local
 * acquire and a give-back are decided under one lock: the acquire holds the kept place, or takes a
 * new one behind whoever queued. A place granted behind another participant (no child watch) goes
 * back at its last release, as without linger. A {@link LockInspector} shows the kept node as the
 * holder's, also while no thread holds it.
 *
 * <p><b>Closing.</b> The place lives as long as a lock object on it is open. {@code close()} on a
 * {@link ReentrantMutex} or {@link NonReentrantMutex} gives up that object's share: when the last
 * one closes, a kept place goes back at once, a place held or waited for goes back at its last
 * release instead of lingering, and once idle the place is dropped from the client's memory. A lock
 * object built afterwards on the same path takes a new place. Without {@code close()}, a kept place
 * goes back when its linger runs out or its client closes.
 */
public final class LocalHandoff {
  /** The default bound: local handoffs in a row while another participant may wait. */
  public static final int DEFAULT_MAX_IN_A_ROW = 8;

  /** The longest linger a lock accepts: one day. */
  public static final Duration MAX_LINGER = Duration.ofDays(1);

  private LocalHandoff() {}

  static long checkLinger(Duration linger) {
    Objects.requireNonNull(linger, "linger");
    if (linger.isNegative() || linger.isZero() || linger.compareTo(MAX_LINGER) > 0) {
      throw new IllegalArgumentException(
          "linger must be positive and at most " + MAX_LINGER + ": " + linger);
    }
    return linger.toNanos();
  }

  /**
   * The attempts of a mutex: on a place shared by the process's local contenders if it asked for
   * local handoff or a linger (which implies the default bound), else plain ones.
   */
  static AttemptFactory attempts(
      LockSettings settings, Slot slot, int localHandoffs, long lingerNanos) {
    if (localHandoffs == 0 && lingerNanos == 0) {
      return AttemptFactory.plain(settings);
    }
    int bound = localHandoffs > 0 ? localHandoffs : DEFAULT_MAX_IN_A_ROW;
    return LocalPlace.attempts(settings, slot, bound, lingerNanos);
  }
}

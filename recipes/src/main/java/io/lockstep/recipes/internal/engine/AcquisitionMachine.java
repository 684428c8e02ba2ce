package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.engine.Step.ArmedWatch;
import io.lockstep.recipes.internal.engine.Step.Cleanup;
import io.lockstep.recipes.internal.queue.QueueJudge;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.internal.zk.Retries;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Supplier;
import org.apache.zookeeper.KeeperException.Code;

/**
 * The transitions of one acquisition: phase x event -&gt; step, the table of {@link
 * AcquisitionState} (which owns this and calls it only under its lock). It checks the epoch and the
 * phase, changes the state and returns the {@link Step} to take next, delegating the create
 * bookkeeping of the current epoch to its {@link Enqueuing}, the reads and the predecessor watch to
 * its {@link Waiting}, and every event after the grant to its {@link GrantedState}. No I/O, no
 * threads, no locks: not thread-safe.
 */
final class AcquisitionMachine {
  private final List<Slot> slots;
  private final String description;
  private final boolean revocable;
  private final boolean appendOnly; // one queue whose new nodes always sort last
  private final boolean watchFirstRead; // the first read leaves a child watch (single queue)
  private final Retries retries;
  private final Supplier<String> protectionIds;
  private final long watchGraceNanos; // how long a hold goes without watching its own node
  private final long startNanos;

  private Phase phase = Phase.CREATING; // until the grant (the hold's phase after it)
  private Enqueuing enqueuing; // the current epoch's create bookkeeping; its epoch is ours
  private List<String> nodes = List.of(); // from created to requeue or the end: ours per slot
  private long owner; // with nodes: the session the server says owns them
  private long token; // with nodes: their czxid; from the grant on, the fencing token
  private long decidedAt; // with nodes: the latest zxid a read or event showed us the queue at
  private int requeues; // times our nodes were lost while waiting
  private final Waiting waiting = new Waiting(); // reads and predecessor watch while waiting
  private boolean grantedAlone; // granted by a watching read that found our nodes alone
  private GrantedState hold; // from the grant on: the hold, which then hears every event

  /**
   * @param description the lock path(s), for messages
   * @param revocable whether a grant first reads and watches our own node, as Curator's does
   * @param watchFirstRead whether the first read leaves a child watch (see {@link QueuePlace})
   * @param watchGraceNanos how long a hold goes before it watches its own node ({@link
   *     GrantedState})
   */
  AcquisitionMachine(
      List<Slot> slots,
      String description,
      boolean revocable,
      boolean watchFirstRead,
      Retries retries,
      Supplier<String> protectionIds,
      long watchGraceNanos) {
    this.slots = List.copyOf(slots);
    this.watchFirstRead = watchFirstRead;
    this.description = description;
    this.revocable = revocable;
    this.appendOnly = slots.size() == 1 && slots.get(0).driver().newNodesSortLast();
    this.retries = retries;
    this.protectionIds = protectionIds;
    this.watchGraceNanos = watchGraceNanos;
    this.startNanos = retries.now();
    this.enqueuing = new Enqueuing(0, retries, startNanos, protectionIds);
  }

  /** The first step: create our nodes. */
  Step start() {
    return enqueuing.send();
  }

  /** One event in, the next step out. */
  Step on(StateEvent event) {
    if (event instanceof StateEvent.Created created) {
      return created(created); // a stale create still leaves a node to remove
    }
    if (event instanceof StateEvent.Stamped stamped && stamped.epoch() != epoch()) {
      return Step.IGNORE;
    }
    return hold != null ? hold.on(event) : dispatch(event);
  }

  /** Records the armed predecessor watch; false if it is no longer wanted. */
  boolean watchArmed(int e, int generation, ArmedWatch armed) {
    return e == epoch() && phase == Phase.WAITING && waiting.arm(generation, armed);
  }

  /** Where the attempt or hold stands. */
  Phase phase() {
    return hold == null ? phase : hold.phase();
  }

  /** The phase, token, nodes, owner and loss reason, read together. */
  AcquisitionState.View view() {
    String lostReason = hold == null ? null : hold.lostReason();
    return new AcquisitionState.View(
        phase(), token, nodes, owner, lostReason, hold != null && grantedAlone);
  }

  /** The events of an attempt not granted (yet): waiting, or ended without a grant. */
  private Step dispatch(StateEvent event) {
    if (event instanceof StateEvent.CreateFailed failed) {
      return createFailed(failed.failure());
    } else if (event instanceof StateEvent.TieRefused refused) {
      return tieRefused(refused.writeNode());
    } else if (event instanceof StateEvent.OwnNodeSearched searched) {
      return phase == Phase.RECOVERING ? ownNodeSearched(searched) : Step.IGNORE;
    } else if (event instanceof StateEvent.OwnNodeSearchFailed failed) {
      return phase == Phase.RECOVERING
          ? orFail(enqueuing.searchFailed(), failed.failure())
          : Step.IGNORE;
    } else if (event instanceof StateEvent.RetryDue) {
      return retryNow();
    } else if (event instanceof StateEvent.QueueRead read) {
      return phase == Phase.READING
          ? judged(read.children(), read.connected(), read.zxid(), waiting.answered(), false)
          : Step.IGNORE;
    } else if (event instanceof StateEvent.QueueWatched watched) {
      return phase == Phase.WAITING && waiting.isCurrentChildWatch(watched.generation())
          ? judged(watched.children(), watched.connected(), watched.zxid(), false, true)
          : Step.IGNORE;
    } else if (event instanceof StateEvent.FirstReadFailed) {
      return phase == Phase.READING ? waiting.read(epoch(), watchFirstRead) : Step.IGNORE;
    } else if (event instanceof StateEvent.ReadFailed failed) {
      return phase.isWaiting() && phase.hasNodes() ? readFailed(failed.failure()) : Step.IGNORE;
    } else if (event instanceof StateEvent.PredecessorChanged changed) {
      return predecessorChanged(changed);
    } else if (event instanceof StateEvent.OwnNodeRead read) {
      return phase == Phase.CONFIRMING ? confirmed(read) : Step.IGNORE;
    } else if (event instanceof StateEvent.OwnNodeReadFailed failed) {
      return phase == Phase.CONFIRMING ? notConfirmed(failed.failure()) : Step.IGNORE;
    } else if (event instanceof StateEvent.Reconnected reconnected) {
      if (phase.hasNodes()) {
        return reconnected.session() != owner
            ? requeue("the session that enqueued it ended", true)
            : Step.IGNORE;
      }
      return retryNow(); // ZooKeeper is back: a retry waiting out its delay goes now
    } else if (event instanceof StateEvent.SessionLost) {
      return phase.hasNodes() ? requeue("the session was lost while waiting", false) : Step.IGNORE;
    } else if (event instanceof StateEvent.Closed) {
      return closed();
    } else if (event instanceof StateEvent.Withdraw) {
      return withdraw();
    } else if (event instanceof StateEvent.Release) {
      throw new IllegalStateException("release of an acquisition never granted: " + phase);
    }
    return Step.IGNORE; // the events of a hold mean nothing before the grant
  }

  private Step created(StateEvent.Created created) {
    boolean answersCreate = created.epoch() == epoch() && enqueuing.unanswered();
    if (answersCreate) {
      enqueuing.answered();
      if (phase == Phase.CREATING) {
        adopt(created.nodes(), created.czxid(), created.owner());
        if (created.localPredecessor() != null && appendOnly) {
          phase = Phase.WAITING; // right behind a node of this process: nothing sorts between
          return waiting.watch(epoch(), created.localPredecessor(), created.predecessorGranted());
        }
        if (created.readBehind()) {
          waiting.readBehindCreate(watchFirstRead); // the read behind the create is the first
          return Step.IGNORE;
        }
        return waiting.read(epoch(), watchFirstRead); // only a first read may leave a child watch
      }
    }
    return new Step.Tidy(Cleanup.nodes(created.nodes()), answersCreate); // not wanted any more
  }

  private Step createFailed(Throwable failure) {
    if (!enqueuing.unanswered()) {
      return Step.IGNORE;
    }
    if (!phase.isWaiting()) {
      return enqueuing.abandoned(failure); // ended while the create was out
    }
    return orFail(enqueuing.failed(failure), failure);
  }

  /** The write hold a downgrade ties to was lost: no read hold may stand in its place. */
  private Step tieRefused(String writeNode) {
    if (!enqueuing.unanswered()) {
      return Step.IGNORE;
    }
    enqueuing.answered();
    if (!phase.isWaiting()) {
      return new Step.Tidy(Cleanup.NONE, true);
    }
    return endFailed(LockFailures.tieBroken(description, writeNode));
  }

  private Step ownNodeSearched(StateEvent.OwnNodeSearched searched) {
    if (searched.found().isEmpty()) {
      phase = Phase.CREATING;
      return enqueuing.notFound();
    }
    long session = searched.session();
    if (searched.complete() && session != 0 && searched.owner() == session) {
      enqueuing.found();
      adopt(searched.found(), searched.czxid(), searched.owner());
      return waiting.read(epoch(), watchFirstRead);
    }
    // A node of an earlier session, which Curator abandoned: not ours to hold.
    phase = Phase.CREATING;
    return new Step.Both(
        new Step.Tidy(Cleanup.nodes(searched.found()), false), enqueuing.foundForeign());
  }

  /** Our nodes exist: the queue is to be read (the caller says how). */
  private void adopt(List<String> created, long czxid, long nodeOwner) {
    nodes = List.copyOf(created);
    token = czxid;
    decidedAt = czxid;
    owner = nodeOwner;
    phase = Phase.READING;
  }

  /** A retry waiting out its delay goes now, if the attempt still waits. */
  private Step retryNow() {
    Step next = phase.isWaiting() ? enqueuing.due() : null;
    return next == null ? Step.IGNORE : next;
  }

  /** A decision of the enqueuing bookkeeping: its step (with the phase it implies), or failure. */
  private Step orFail(Step next, Throwable failure) {
    if (next == null) {
      return fail(failure);
    }
    phase = enqueuing.recovering() ? Phase.RECOVERING : Phase.CREATING;
    return next;
  }

  /**
   * Judges a read: hold, watch, or requeue. {@code watched}: it left a child watch for a holder;
   * {@code armed}: it armed our child watch on a lease directory ({@link StateEvent.QueueWatched}).
   */
  private Step judged(
      List<List<String>> children, boolean connected, long zxid, boolean watched, boolean armed) {
    List<String> duplicates = QueueJudge.duplicates(slots, nodes, children);
    Step next = verdict(children, connected, zxid, watched, armed);
    // A create of ours that stands twice (see QueueJudge.duplicates) would block the queue until
    // its session ends: it goes, whatever the verdict (watching it, we hear it go).
    return duplicates.isEmpty()
        ? next
        : new Step.Both(new Step.Tidy(Cleanup.nodes(duplicates), false), next);
  }

  private Step verdict(
      List<List<String>> children, boolean connected, long zxid, boolean watched, boolean armed) {
    QueueJudge.Verdict verdict;
    try {
      verdict = QueueJudge.judge(slots, nodes, children);
    } catch (RuntimeException driverFailure) {
      return fail(driverFailure);
    }
    if (verdict.nodesMissing()) {
      return requeue("our lock node disappeared while waiting", false);
    }
    decidedAt = Math.max(decidedAt, zxid);
    if (verdict.holds()) {
      // Alone, and told of the next enqueue by the read's child watch; without it, never alone.
      grantedAlone = watched && QueueJudge.eachAlone(children);
      // Without the read's child watch, the hold watches its own node after its grace.
      return revocable ? confirm() : grant(false, connected, false, watched);
    }
    phase = Phase.WAITING;
    if (armed) {
      return Step.IGNORE; // the armed watch brings any change after this read
    }
    return verdict.watchChildren()
        ? waiting.watchChildren(epoch(), verdict.watchPath())
        : waiting.watch(epoch(), verdict.watchPath(), verdict.watchIsHead());
  }

  private Step readFailed(Throwable failure) {
    return Retries.code(failure) == Code.SESSIONEXPIRED
        ? requeue("the session expired while waiting", false)
        : fail(failure);
  }

  private Step predecessorChanged(StateEvent.PredecessorChanged changed) {
    if (phase != Phase.WAITING || !waiting.fired(changed.generation())) {
      return Step.IGNORE;
    }
    if (waiting.watchesChildren()) {
      return waiting.watchChildren(epoch(), slots.get(0).path()); // one read arms the next watch
    }
    if (changed.deleted()
        && changed.zxid() > 0
        && (waiting.watchedHead() || (changed.localHolderLeft() && appendOnly))) {
      // Next after the head of an append-only queue: nothing can sort ahead of us now (see
      // docs/design.md, "Taking over from the head"). Without the deletion's zxid, read.
      decidedAt = Math.max(decidedAt, changed.zxid());
      return revocable ? confirm() : grant(false, changed.connected(), false, false);
    }
    phase = Phase.READING;
    return waiting.read(epoch(), false);
  }

  /** Our node read before the grant: still ours, so we hold (and honour an early revocation). */
  private Step confirmed(StateEvent.OwnNodeRead read) {
    if (read.owner() != owner) {
      return requeue("our lock node is no longer ours", false);
    }
    return grant(read.revokeRequested(), read.connected(), true, false);
  }

  private Step notConfirmed(Throwable failure) {
    return Retries.code(failure) == Code.NONODE
        ? requeue("our lock node disappeared while waiting", false)
        : readFailed(failure);
  }

  /** Terminal. The session, and our nodes, end with the client: nothing is sent. */
  private Step closed() {
    if (!phase.isWaiting()) {
      return Step.IGNORE;
    }
    Cleanup cleanup = new Cleanup(List.of(), waiting.takeWatch(), null, false, true);
    enqueuing.cancelDelay();
    enqueuing.answered(); // its answer, if one comes, finds nothing waiting for it
    return end(Phase.FAILED, LockFailures.clientClosed(description), cleanup);
  }

  /** IGNORE if the lock was granted first (or the attempt already ended). */
  private Step withdraw() {
    return phase.isWaiting()
        ? end(Phase.WITHDRAWN, null, enqueuing.leave(nodes, waiting.takeWatch()))
        : Step.IGNORE;
  }

  private int epoch() {
    return enqueuing.epoch();
  }

  /** A revocable lock reads and watches its node before the grant, as Curator's does. */
  private Step confirm() {
    phase = Phase.CONFIRMING;
    return new Step.ReadOwnNode(epoch(), nodes.get(0), Step.Purpose.CONFIRM, true);
  }

  /**
   * From now on the hold hears every event. Its token is the zxid the grant was decided at, if
   * later than our czxid: every earlier holder's last write (a local holder's fence, its node's
   * deletion) came before it, so no token handed out before this grant is larger.
   */
  private Step grant(
      boolean revoke, boolean connected, boolean ownNodeWatched, boolean queueWatched) {
    token = Math.max(token, decidedAt);
    hold =
        new GrantedState(
            epoch(),
            token,
            nodes,
            owner,
            connected,
            ownNodeWatched,
            queueWatched,
            retries.clock(),
            watchGraceNanos);
    return hold.grant(revoke);
  }

  /**
   * Our nodes were lost while waiting: enqueue again in a new epoch, as the policy allows; after
   * its delay, or at once when {@code connected} (a reconnect in a new session: ZooKeeper is back,
   * so the policy decides whether, not how long after).
   */
  private Step requeue(String reason, boolean connected) {
    Cleanup cleanup = new Cleanup(nodes, waiting.takeWatch(), null, false, false);
    nodes = List.of();
    OptionalLong delay = retries.delayMillis(requeues++, startNanos);
    if (delay.isEmpty()) {
      return end(Phase.FAILED, LockFailures.retriesExhausted(description, reason), cleanup);
    }
    enqueuing = new Enqueuing(epoch() + 1, retries, startNanos, protectionIds);
    enqueuing.createAfterDelay();
    phase = Phase.CREATING;
    return new Step.Requeue(cleanup, epoch(), connected ? 0 : delay.getAsLong(), reason);
  }

  private Step fail(Throwable failure) {
    return endFailed(LockFailures.of(description, failure));
  }

  /** Ends a waiting attempt that failed; an unanswered create's answer brings a Tidy. */
  private Step endFailed(RuntimeException failure) {
    return end(Phase.FAILED, failure, enqueuing.leave(nodes, waiting.takeWatch()));
  }

  /** Ends a waiting attempt in {@code last}, failing with {@code failure} unless it is null. */
  private Step end(Phase last, RuntimeException failure, Cleanup cleanup) {
    phase = last;
    return new Step.End(failure, cleanup);
  }
}

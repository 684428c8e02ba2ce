package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockOwnershipLostException;
import io.lockstep.recipes.locks.LockState;
import io.lockstep.recipes.locks.LockUnreachableException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The outward side of one attempt and of the hold it becomes, the same for an {@link Acquisition}
 * with a node of its own and for a {@link PlaceMember} taking turns on its process's place: the
 * futures a caller waits on, what the lock's listeners, observers and the Flight Recorder hear, and
 * the log. Its owner calls it in the order its state decided (through an {@link Outbox}); the
 * {@link Notifier} delivers in that order, one notice at a time, never on ZooKeeper's event thread.
 * The held / at-risk / lost machine it announces is the owner's {@link Tenure}.
 */
public final class Lifecycle {
  private static final Logger log = LoggerFactory.getLogger(Lifecycle.class);

  /** {@link #unheardGrantNanos} while no grant went unheard: no clock reads this. */
  private static final long NOT_UNHEARD = Long.MIN_VALUE;

  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<Lifecycle, CompletableFuture> DECISION =
      AtomicReferenceFieldUpdater.newUpdater(Lifecycle.class, CompletableFuture.class, "decision");

  private static final AtomicReferenceFieldUpdater<Lifecycle, Telemetry> TELEMETRY =
      AtomicReferenceFieldUpdater.newUpdater(Lifecycle.class, Telemetry.class, "telemetry");

  private static final AtomicReferenceFieldUpdater<Lifecycle, Notifier> NOTIFIER =
      AtomicReferenceFieldUpdater.newUpdater(Lifecycle.class, Notifier.class, "notifier");

  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<Lifecycle, CompletableFuture> LOST =
      AtomicReferenceFieldUpdater.newUpdater(Lifecycle.class, CompletableFuture.class, "lost");

  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<Lifecycle, Consumer> SETTLED =
      AtomicReferenceFieldUpdater.newUpdater(Lifecycle.class, Consumer.class, "settledHook");

  /** What {@link #settledHook} holds once the attempt settled. */
  private static final Consumer<Attempt> DONE = settled -> {};

  private final LockSettings settings;
  private final long startNanos; // when the attempt began, on the engine's clock
  // What observers and recordings hear: made as the attempt begins if anyone would hear of it, or
  // when someone first does; an attempt nobody hears of has none.
  private volatile Telemetry telemetry;
  // When it was granted if nobody heard of the grant (no telemetry was made then), else
  // NOT_UNHEARD.
  private volatile long unheardGrantNanos = NOT_UNHEARD;
  // Made at the first notice that must wait its turn (a listener, an observer, a loss, a
  // revocation): an attempt nobody hears has none, and its grant wakes the caller at once.
  private volatile Notifier notifier;

  @SuppressWarnings("unused") // through its updater
  private volatile Consumer<Attempt> settledHook; // told once granted completes; then DONE

  private Attempt settling; // what the hook is told of: written before the hook, read after it
  private final CompletableFuture<Void> granted = new Parking<>(); // the caller parks on it

  // What a zero budget waits for: a Lazy signal, given when the first try has a verdict.
  @SuppressWarnings("unused") // through its updater
  private volatile CompletableFuture<Void> decision;

  // The loss stage: made when a caller asks for it (lostFuture) or the hold is lost; most never.
  private volatile CompletableFuture<LockOwnershipLostException> lost;
  private volatile String releasedQuietly; // set once let go without a loss: see released()
  private volatile RuntimeException failure;
  private volatile AcquireOutcome withdrawnAs = AcquireOutcome.WITHDRAWN;
  private volatile RuntimeException withdrawnWith; // what a withdrawn attempt's caller gets, if set
  private volatile Consumer<LockState> changeHook; // told of the hold's changes, in order
  private final long disconnectsAtStart; // the client's disconnects when the attempt began
  private volatile long tokenTaken; // one its owner's notices lack: see tokenTaken(long)

  public Lifecycle(LockSettings settings) {
    this(settings, null);
  }

  /**
   * @param carried the acquisition this attempt carries on, or null for a new one
   */
  Lifecycle(LockSettings settings, Observation carried) {
    this.settings = settings;
    this.disconnectsAtStart = settings.disconnects();
    this.startNanos = settings.now();
    if (carried != null) {
      this.telemetry = carried.telemetry().carriedOn(this);
    } else if (Telemetry.wanted(settings)) {
      this.telemetry = new Telemetry(settings, this, startNanos, true, false, 0);
    }
  }

  /** The telemetry, made now if there is none yet. */
  private Telemetry telemetry() {
    return Lazy.get(this, TELEMETRY, Lifecycle::lateTelemetry);
  }

  /** A telemetry made after the start, when someone first hears of the attempt. */
  private Telemetry lateTelemetry() {
    long grantedNanos = unheardGrantNanos;
    return new Telemetry(
        settings, this, startNanos, false, grantedNanos != NOT_UNHEARD, grantedNanos);
  }

  /** The telemetry if someone hears of the attempt now (made now if need be), else null. */
  private Telemetry heard() {
    Telemetry made = telemetry;
    return made != null || !Telemetry.wanted(settings) ? made : telemetry();
  }

  /** The notifier of this attempt's notices, made now if none was yet. */
  Notifier notifier() {
    return Lazy.get(this, NOTIFIER, l -> new Notifier(l.settings.scheduler()));
  }

  /**
   * Tells {@code hook} of {@code attempt}, this lifecycle's, once it settles: granted, failed or
   * withdrawn (at once if it has). One hook per attempt: its lock object's tracker of the attempts
   * its close withdraws, the same hook for all of them.
   */
  void whenSettled(Attempt attempt, Consumer<Attempt> hook) {
    settling = attempt;
    if (!SETTLED.compareAndSet(this, null, hook)) {
      hook.accept(attempt); // settled already
    }
  }

  /** {@link #grantedFuture()} completed: the hook hears it. */
  @SuppressWarnings("unchecked")
  private void settle() {
    Consumer<Attempt> hook = SETTLED.getAndSet(this, DONE);
    if (hook != null) {
      hook.accept(settling);
    }
  }

  /** The caller wakes: the lock is held. */
  private void grant() {
    granted.complete(null);
    settle();
  }

  /** This attempt's acquisition, for the next attempt to carry on. */
  Observation observation() {
    return new Observation(telemetry());
  }

  /** The attempt begins: counted as live, and observers hear it in the calling thread. */
  public void started() {
    settings.attemptStarted();
    if (settings.hasObservers()) {
      telemetry().started();
    }
  }

  /** Completes when the lock is held; fails with the failure, or when withdrawn. */
  public CompletableFuture<Void> grantedFuture() {
    return granted;
  }

  /** Whether the client lost its connection (or closed) since the attempt began. */
  public boolean disconnectedSinceStart() {
    return settings.disconnects() != disconnectsAtStart;
  }

  /** Completes when the first try reached a verdict: what a zero budget waits for. */
  public CompletableFuture<Void> decidedFuture() {
    return Lazy.awaited(this, DECISION);
  }

  /** The first try reached a verdict: a zero budget waiting for it, or asking later, goes on. */
  private void decide() {
    Lazy.give(this, DECISION);
  }

  /**
   * A stage of the caller's own that completes with the loss once the hold is LOST, or fails with a
   * {@link CancellationException} once it is let go without a loss: the loss by the {@link
   * Notifier}, after the listeners heard it; the release by the Notifier too if a stage waits then,
   * else by the first caller that asks afterwards. Never on ZooKeeper's event thread.
   */
  public CompletableFuture<LockOwnershipLostException> lostFuture() {
    CompletableFuture<LockOwnershipLostException> loss = lost();
    CompletableFuture<LockOwnershipLostException> stage = loss.copy(); // first: see released()
    String description = releasedQuietly;
    if (description != null && !loss.isDone()) {
      loss.completeExceptionally(released(description)); // in the asking thread, never ZooKeeper's
    }
    return stage;
  }

  /** The loss stage, made now if nobody asked for it yet. */
  @SuppressWarnings("unchecked") // LOST is the updater of this field
  private CompletableFuture<LockOwnershipLostException> lost() {
    return Lazy.get(this, LOST, l -> new CompletableFuture<LockOwnershipLostException>());
  }

  /** Why the attempt failed, once it has. */
  public RuntimeException failure() {
    return failure;
  }

  /**
   * What observers hear if the attempt ends withdrawn: {@code TIMED_OUT} or {@code WITHDRAWN}; or
   * null: nothing, as the caller carries its {@link Observation} on.
   */
  public void withdrawing(AcquireOutcome reason) {
    withdrawnAs = reason;
  }

  /**
   * The attempt is being withdrawn because its lock object closed: its caller gets {@code failWith}
   * rather than a plain withdrawal; observers hear WITHDRAWN.
   */
  public void withdrawing(RuntimeException failWith) {
    withdrawnAs = AcquireOutcome.WITHDRAWN;
    withdrawnWith = failWith;
  }

  /**
   * Runs {@code hook}, in order with the other notices, at each change of the hold's state after
   * its grant (AT_RISK, HELD again, LOST). Unlike the lock's listeners, it is told of this hold.
   */
  void onChange(Consumer<LockState> hook) {
    changeHook = hook;
  }

  /** The first try reached a verdict: the attempt waits behind someone, or holds. */
  public void decided() {
    decide();
  }

  /** Listeners hear HELD (and AT_RISK, if granted at risk) before the caller wakes. */
  public void granted(long token, boolean atRisk) {
    decide();
    Telemetry heard = heard();
    if (heard != null) {
      heard.granted(token);
    } else {
      unheardGrantNanos = settings.now(); // for a telemetry made later: when it was granted
    }
    if (settings.hasListeners()) {
      notifier().submit(() -> settings.tellListeners(LockState.HELD, token));
    }
    if (atRisk) {
      stateChanged(LockState.AT_RISK, token);
      if (settings.hasListeners()) {
        notifier().submit(() -> settings.tellListeners(LockState.AT_RISK, token));
      }
    }
    Notifier queue = notifier;
    if (queue == null) {
      grant(); // nothing was queued: the caller wakes at once, in this thread
    } else {
      queue.submitQuiet(this::grant); // after what was queued: HELD first
    }
  }

  /**
   * The hold took {@code token} while held, on a node of its own its owner's notices do not know (a
   * shared read that joined): its later notices carry it, as those of a hold fenced otherwise.
   */
  public void tokenTaken(long token) {
    tokenTaken = token;
  }

  /** The hold entered {@code state} (AT_RISK, HELD again, LOST). */
  public void changed(LockState state, long noticed, String reason) {
    long token = noticed != 0 ? noticed : tokenTaken;
    if (state == LockState.LOST) {
      log.warn("Lock {} lost: {}", settings.description(), reason);
    } else {
      log.debug("Lock {} is {}: {}", settings.description(), state, reason);
    }
    stateChanged(state, token);
    if (settings.hasListeners()) {
      notifier().submit(() -> settings.tellListeners(state, token));
    }
    Consumer<LockState> hook = changeHook;
    if (hook != null) {
      notifier().submit(() -> hook.accept(state));
    }
    if (state == LockState.LOST) {
      LockOwnershipLostException loss = LockFailures.lost(settings.description(), reason);
      notifier().submit(() -> lost().complete(loss));
    }
  }

  private void stateChanged(LockState state, long token) {
    Telemetry heard = heard();
    if (heard != null) {
      heard.stateChanged(state, token);
    }
  }

  /** A revocation was requested: {@code handler} runs in order with the notices. */
  void revoke(Runnable handler) {
    notifier().submit(handler);
  }

  /** The attempt ended without a grant: withdrawn if {@code failure} is null, else failed. */
  public void ended(RuntimeException failure) {
    settings.attemptEnded();
    decide();
    AcquireOutcome outcome =
        failure == null
            ? withdrawnAs
            : failure instanceof LockUnreachableException
                ? AcquireOutcome.UNREACHABLE
                : AcquireOutcome.FAILED;
    if (outcome != null) { // null: withdrawn for the next attempt to carry on
      Telemetry heard = heard();
      if (heard != null) {
        heard.ended(outcome);
      }
    }
    if (failure == null) {
      RuntimeException why = withdrawnWith;
      granted.completeExceptionally(why != null ? why : new CancellationException("withdrawn"));
    } else {
      this.failure = failure;
      granted.completeExceptionally(failure);
    }
    settle();
  }

  /**
   * The hold was let go; warns if it had been lost.
   *
   * @return completes once listeners and observers have heard RELEASED
   */
  public CompletableFuture<Void> released(long noticed, String lostReason) {
    long token = noticed != 0 ? noticed : tokenTaken;
    settings.attemptEnded();
    if (lostReason != null) {
      log.warn(
          "Released lock {} after it was lost ({}); local state cleared",
          settings.description(),
          lostReason);
    }
    Telemetry heard = heard();
    CompletableFuture<Void> observed = heard == null ? Telemetry.HEARD : heard.released(token);
    if (lostReason == null) { // a hold lost before has its loss on the way already
      // Nobody waiting for the loss stage: whoever asks for it from now on ends it (lostFuture).
      // Its stage is registered before it reads releasedQuietly, and this reads the dependents
      // after writing it, so one of the two always sees the other.
      releasedQuietly = settings.description();
      CompletableFuture<LockOwnershipLostException> loss = lost; // if nobody made it, nobody asked
      if (loss != null && loss.getNumberOfDependents() > 0) {
        notifier()
            .submit(
                () -> {
                  if (!loss.isDone()) {
                    loss.completeExceptionally(released(settings.description()));
                  }
                });
      }
    }
    if (!settings.hasListeners()) {
      return observed;
    }
    return CompletableFuture.allOf(
        observed,
        notifier().submitTracked(() -> settings.tellListeners(LockState.RELEASED, token)));
  }

  /** Whether anyone hears this attempt: a listener of its lock, or an observer. */
  public boolean isHeard() {
    return settings.hasListeners() || settings.hasObservers();
  }

  /** Whether the current thread is delivering this lifecycle's notices (a listener calls us). */
  public boolean isDeliveringHere() {
    Notifier queue = notifier;
    return queue != null && queue.isDeliveringHere();
  }

  /**
   * How a hold's loss stage ends when the hold is let go without a loss: a cancellation without a
   * stack trace, which would only say where the release's notice ran.
   */
  private static CancellationException released(String description) {
    return new CancellationException("Lock " + description + " was released") {
      private static final long serialVersionUID = 1L;

      @Override
      public Throwable fillInStackTrace() {
        return this;
      }
    };
  }
}

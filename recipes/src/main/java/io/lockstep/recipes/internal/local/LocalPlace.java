package io.lockstep.recipes.internal.local;

import io.lockstep.recipes.internal.engine.Acquisition;
import io.lockstep.recipes.internal.engine.AcquisitionState;
import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.AttemptFactory;
import io.lockstep.recipes.internal.engine.LockEngine;
import io.lockstep.recipes.internal.engine.LockFailures;
import io.lockstep.recipes.internal.engine.LockSettings;
import io.lockstep.recipes.internal.engine.Outbox;
import io.lockstep.recipes.internal.engine.Phase;
import io.lockstep.recipes.internal.engine.PlaceHooks;
import io.lockstep.recipes.internal.queue.NodeShape;
import io.lockstep.recipes.internal.queue.ReadWriteDriver;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.internal.zk.NodeCreates;
import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.locks.AcquireOutcome;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockState;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException.Code;

/**
 * One process's place in a lock's queue, shared by the local contenders of every lock object of one
 * client on that path that asked for local handoff (cohort locking). The place is an ordinary
 * {@link Acquisition}, so Curator and other processes see an ordinary node; its holds pass from
 * member to member in memory.
 *
 * <p>{@link PlaceState} owns the state and decides; this class carries out its steps, in order
 * ({@link Outbox}), outside the state's lock: it starts and withdraws the place's attempt, releases
 * it, reads the queue at the bound, writes the node for a fence, and tells each {@link PlaceMember}
 * through its {@link Lifecycle}. No step blocks; a member's release waits for what it sent.
 */
public final class LocalPlace {
  private final LockSettings settings; // the place's own: observed through its members only
  private final Slot slot;
  private final PlaceState state;
  private final Outbox<PlaceStep> outbox = new Outbox<>(this::run);
  private final ConcurrentMap<Integer, Acquisition> taken = new ConcurrentHashMap<>();
  private volatile int lastTaken; // the id of the place's attempt started last
  private final String key; // the place's key among its engine's shared objects
  private final boolean sharedReads; // concurrent readers on one read node, not turns
  private final QueueCheck queueCheck; // the reads of the queue the table asks for

  // The open lock objects on the place. Changed only under the engine's lock for the key
  // (LockEngine.joinShared, updateShared), so that a place is never dropped while one opens on it.
  private int objects;

  // An event sent under that lock left steps to run after it (never drained under that lock).
  private final AtomicBoolean drainAsked = new AtomicBoolean();

  /**
   * Attempts of a lock object of {@code settings} that take turns on its client's place in {@code
   * slot}'s queue, handed on in memory at most {@code maxInARow} times in a row while another
   * participant may wait, and kept for up to {@code lingerNanos} after the last local release while
   * nobody else queues (0: given back at once). One place per client, path and lock name, however
   * many lock objects.
   */
  public static AttemptFactory attempts(
      LockSettings settings, Slot slot, int maxInARow, long lingerNanos) {
    LocalPlace place = open(settings, slot, "place|", false);
    return AttemptFactory.of(
        settings,
        (lockSettings, slots, revocationHandler) ->
            place.join(lockSettings, maxInARow, lingerNanos),
        place::closed);
  }

  /**
   * The read place of a read-write lock object of {@code settings} in {@code slot}'s queue, shared
   * by its client's concurrent readers on that path (read sharing): one per client and path,
   * however many lock objects. The caller starts its attempts with {@link #join} and gives up its
   * share with {@link #closed()}.
   */
  public static LocalPlace sharedReads(LockSettings settings, Slot slot) {
    return open(settings, slot, "reads|", true);
  }

  private static LocalPlace open(LockSettings settings, Slot slot, String kind, boolean reads) {
    LockEngine engine = settings.engine();
    LockSettings placeSettings = LockSettings.unobserved(engine, settings.client(), slot.path());
    String key = kind + placeSettings.zk().toZk(slot.path()) + "|" + slot.driver().lockName();
    LocalPlace place =
        engine.joinShared(
            key,
            LocalPlace.class,
            k -> new LocalPlace(placeSettings, slot, k, reads),
            LocalPlace::opened);
    place.drainIfAsked();
    return place;
  }

  private LocalPlace(LockSettings settings, Slot slot, String key, boolean sharedReads) {
    this.settings = settings;
    this.slot = slot;
    this.key = key;
    this.sharedReads = sharedReads;
    this.state =
        sharedReads
            ? PlaceState.sharedReads(settings.retries()::now)
            : new PlaceState(settings.retries()::now);
    this.queueCheck = new QueueCheck(settings, slot.path(), sharedReads, () -> lastTaken, this::on);
  }

  /** A member of {@code memberSettings}'s lock object joins and waits for its turn. */
  public PlaceMember join(LockSettings memberSettings, int maxInARow, long lingerNanos) {
    PlaceMember member = new PlaceMember(this, memberSettings, maxInARow, lingerNanos);
    member.lifecycle().started();
    int place = lastTaken;
    on(new PlaceEvent.Join(member.record(), place, isLost(place)));
    return member;
  }

  /** A lock object opens on the place (under the engine's lock for its key). */
  private void opened() {
    if (objects++ == 0) {
      askDrain(state.on(new PlaceEvent.Used(), outbox));
    }
  }

  /** A lock object on the place closed: the last one lets the place go when nobody needs it. */
  public void closed() {
    settings
        .engine()
        .updateShared(
            key,
            this,
            place -> {
              if (--objects == 0) {
                askDrain(state.on(new PlaceEvent.Unused(), outbox));
              }
              return true;
            });
    drainIfAsked();
  }

  private void askDrain(boolean drain) {
    if (drain) {
      drainAsked.set(true);
    }
  }

  /** Runs the steps an event sent under the engine's lock left (never drained under that lock). */
  private void drainIfAsked() {
    if (drainAsked.getAndSet(false)) {
      outbox.drain();
    }
  }

  /** The state, for a member's reads. */
  PlaceState state() {
    return state;
  }

  /** Whether this is a shared read place: its members' tokens and checks are their own nodes'. */
  boolean isSharedReads() {
    return sharedReads;
  }

  /**
   * A read node of a member's own, tied to the shared read node {@code node}: created only while
   * that node exists, and standing at its place in the queue.
   */
  Slot ownSlot(String node) {
    String sequence = ReadWriteDriver.sequenceOf(ZKPaths.getNodeFromPath(node));
    return Slot.tiedTo(slot.path(), slot.driver(), slot.data(), sequence, node);
  }

  /** The settings of the place's own attempts: observed through its members only. */
  LockSettings placeSettings() {
    return settings;
  }

  /**
   * A writer of this process starts or stops waiting ({@code granted}, or not): readers do not join
   * while one waits.
   */
  public void localWriter(boolean waits, boolean granted) {
    on(new PlaceEvent.LocalWriter(waits, granted));
  }

  /**
   * The place of local hold {@code hold}, if it has one, goes back at that hold's release instead
   * of passing on: a downgrade's read node stands on the place's node.
   */
  public static void yieldAtRelease(Attempt hold) {
    if (hold instanceof PlaceMember member) {
      member.place().on(new PlaceEvent.YieldAtRelease(member.record()));
    }
  }

  /** A waiting member gives up, unless it was granted or failed first. */
  Attempt.Outcome withdraw(Contender member) {
    on(new PlaceEvent.Withdraw(member));
    Phase phase = state.phaseOf(member);
    if (phase.wasGranted()) {
      return Attempt.Outcome.GRANTED;
    }
    return phase == Phase.FAILED ? Attempt.Outcome.FAILED : Attempt.Outcome.WITHDRAWN;
  }

  /**
   * A holding member lets go; {@code done} completes once what it sent is done.
   *
   * @return whether the release sent anything (it gave the place back): a handoff sends nothing
   */
  boolean release(Contender member, CompletableFuture<Void> done) {
    int place = lastTaken; // a holder's place was taken before it was granted: this one, or later
    List<PlaceStep> steps = new ArrayList<>(3);
    if (state.on(new PlaceEvent.Release(member, place, isLost(place), done), outbox, steps)) {
      outbox.drain();
    }
    for (PlaceStep step : steps) {
      if (step instanceof PlaceStep.GiveBack) {
        return true;
      }
    }
    return false;
  }

  /** Asks for {@code member}'s fence; {@code ready} completes when it has one, or fails. */
  void fence(Contender member, CompletableFuture<Void> ready) {
    on(new PlaceEvent.FenceAsked(member, ready));
  }

  void on(PlaceEvent event) {
    if (state.on(event, outbox)) {
      outbox.drain();
    }
  }

  /** Whether the place's attempt {@code place} was granted and is lost since. */
  private boolean isLost(int place) {
    Acquisition attempt = taken.get(place);
    return attempt != null && attempt.phase() == Phase.LOST;
  }

  private void run(PlaceStep step) {
    if (step instanceof PlaceStep.Take take) {
      take(take.place());
    } else if (step instanceof PlaceStep.WithdrawPlace withdraw) {
      withdrawPlace(withdraw);
    } else if (step instanceof PlaceStep.GiveBack giveBack) {
      giveBack(giveBack);
    } else if (step instanceof PlaceStep.LingerTimer timer) {
      long millis = TimeUnit.NANOSECONDS.toMillis(timer.delayNanos() + 999_999);
      settings
          .scheduler()
          .schedule(millis, () -> on(new PlaceEvent.LingerDue(timer.place(), timer.due())));
    } else if (step instanceof PlaceStep.Retire) {
      settings.engine().updateShared(key, this, place -> !state.isRetirable());
    } else if (step instanceof PlaceStep.CheckQueue check) {
      checkQueue(check.place(), check.watch());
    } else if (step instanceof PlaceStep.Write write) {
      write(write);
    } else if (!Contender.hear(step)) {
      throw new IllegalStateException("unknown step " + step);
    }
  }

  /** Starts the place's attempt; its news comes back tagged with {@code place}. */
  private void take(int place) {
    Acquisition attempt =
        Acquisition.start(
            settings,
            List.of(slot),
            null,
            new PlaceHooks() {
              @Override
              public void queueChanged() {
                on(new PlaceEvent.QueueChanged(place));
              }

              @Override
              public void stateChanged(LockState changed) {
                on(new PlaceEvent.PlaceChanged(place, changed));
              }
            },
            null);
    taken.put(place, attempt); // before any later step: they run after this one
    lastTaken = place;
    Callbacks.when(
        attempt.decided(),
        (v, f) -> {
          if (attempt.phase().isWaiting()) {
            on(new PlaceEvent.PlaceDecided(place)); // waits behind someone; a grant says so itself
          }
        });
    Callbacks.when(
        attempt.grantedFuture(),
        (v, failure) -> on(failure == null ? granted(place, attempt) : ended(place, attempt)));
  }

  private static PlaceEvent granted(int place, Acquisition attempt) {
    AcquisitionState.View view = attempt.view();
    return new PlaceEvent.PlaceGranted(
        place,
        view.nodes().get(0),
        view.owner(),
        view.token(),
        view.phase() == Phase.AT_RISK,
        view.alone(),
        !view.phase().isHolding());
  }

  private PlaceEvent ended(int place, Acquisition attempt) {
    RuntimeException failure = attempt.failure();
    return new PlaceEvent.PlaceEnded(
        place,
        failure != null
            ? failure
            : new LockException("Lock " + settings.description() + ": the attempt ended", null));
  }

  /** Nobody needs the place's attempt: withdrawn, or released if granted at the same moment. */
  private void withdrawPlace(PlaceStep.WithdrawPlace withdraw) {
    Acquisition attempt = taken.remove(withdraw.place());
    if (attempt == null) {
      withdraw.member().cleaned.complete(null);
      return;
    }
    CompletableFuture<Void> cleanup =
        attempt.withdraw(AcquireOutcome.WITHDRAWN) == Attempt.Outcome.GRANTED
            ? attempt.releaseAsync()
            : attempt.cleanedUp();
    Callbacks.when(cleanup, (v, f) -> withdraw.member().cleaned.complete(null));
  }

  private void giveBack(PlaceStep.GiveBack giveBack) {
    Acquisition attempt = taken.remove(giveBack.place());
    if (attempt == null) {
      complete(giveBack.done());
      return;
    }
    Callbacks.when(attempt.releaseAsync(), (v, f) -> complete(giveBack.done()));
  }

  /** Reads the queue for the place's attempt {@code place}, if it still has it. */
  private void checkQueue(int place, boolean watch) {
    Acquisition attempt = taken.get(place);
    if (attempt != null) {
      queueCheck.send(place, attempt.nodePaths().get(0), watch, () -> isLost(place));
    }
  }

  /** Writes the node with the data it has: a fresh zxid, and a new version for the checks. */
  private void write(PlaceStep.Write write) {
    int place = write.place();
    Acquisition attempt = taken.get(place);
    if (attempt == null) {
      return;
    }
    Callbacks.when(
        settings.zk().setData(attempt.nodePaths().get(0), nodeData()),
        (stat, failure) -> {
          if (failure == null) {
            on(
                new PlaceEvent.FenceWritten(
                    place, write.write(), stat.getMzxid(), stat.getVersion(), isLost(place)));
          } else {
            on(
                new PlaceEvent.FenceFailed(
                    place,
                    write.write(),
                    Retries.code(failure) == Code.NONODE,
                    LockFailures.of(settings.description(), failure)));
          }
        });
  }

  /**
   * What the place's node holds, written again by a fence: the data of its create, which the slot
   * keeps from then on (resolved then, not when the place is made: a lock object may be made before
   * its client starts, and Curator resolves a create's data for a started client only).
   */
  private byte[] nodeData() {
    NodeShape shape = slot.shape();
    byte[] created =
        shape != null
            ? shape.data()
            : NodeCreates.resolveCreate(settings.client(), slot, "data").getData();
    return created == null ? new byte[0] : created;
  }

  static void complete(CompletableFuture<Void> done) {
    if (done != null) {
      done.complete(null);
    }
  }
}

package io.lockstep.recipes.internal.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.internal.engine.Phase;
import io.lockstep.recipes.locks.LockException;
import io.lockstep.recipes.locks.LockState;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Liveness of both tables of a place shared by local holds ({@link PlaceMachine}, {@link
 * SharedReadRules}), over any run of events: members join, wait, give up, hold and let go, while
 * the place's own attempt is granted, turned down, fails, goes at risk, is lost (heard at once or
 * only later), sees others queue, lingers, and the lock objects close and open again. Then the
 * faults heal: every attempt and read the place sent is answered as a healthy server would, and
 * every holder lets go. Whatever the run:
 *
 * <ul>
 *   <li>within a bounded number of rounds nobody waits or holds any more, and the place holds no
 *       node (after the linger of a kept one), so nothing is left behind;
 *   <li>every member hears exactly one ending: a grant then a release, or an end without a grant;
 *       never a grant after its end, or a release announced twice;
 *   <li>an unused place asks to be dropped once it is idle;
 *   <li>the mutex's table never lets two members hold at once.
 * </ul>
 *
 * <p>Breaks it fails on, each tried on purpose: a give-back at a release that takes no new place
 * for the members waiting (either table); a linger that runs out but keeps the node; an idle unused
 * place that never asks to be dropped; a second release announced again; a withdrawn member left in
 * the waiting list; a handoff while a member holds.
 */
class PlaceLivenessPropertiesTest {
  private static final long LINGER = 50;

  /** What can happen next while faults may strike. */
  enum Action {
    JOIN,
    JOIN_LINGERING,
    GRANT_PLACE,
    GRANT_PLACE_WITH_OTHERS,
    DECIDE_PLACE,
    FAIL_PLACE,
    STALE_GRANT,
    RELEASE,
    RELEASE_AGAIN,
    WITHDRAW,
    AT_RISK,
    RESTORED,
    LOSE_PLACE,
    LOSE_PLACE_UNHEARD,
    HEAR_LOSS,
    QUEUE_CHANGED,
    READ_ALONE,
    READ_OTHERS,
    LINGER_DUE,
    UNUSED,
    USED,
    WRITER_WAITS,
    WRITER_STOPS
  }

  @Provide
  Arbitrary<List<Action>> runs() {
    return Arbitraries.of(Action.class).list().ofMinSize(1).ofMaxSize(80);
  }

  @Property(tries = 1000)
  void mutexPlace_onceFaultsHeal_everyMemberEndsOnce_andNothingIsLeft(
      @ForAll("runs") List<Action> run, @ForAll @IntRange(min = 1, max = 3) int bound) {
    assertHealsCleanly(new World(false, bound), run);
  }

  @Property(tries = 1000)
  void sharedReadPlace_onceFaultsHeal_everyMemberEndsOnce_andNothingIsLeft(
      @ForAll("runs") List<Action> run, @ForAll @IntRange(min = 1, max = 3) int bound) {
    assertHealsCleanly(new World(true, bound), run);
  }

  private static void assertHealsCleanly(World world, List<Action> run) {
    run.forEach(world::act);
    world.heal();
    assertThat(world.violations).isEmpty();
  }

  /** The place's table and what its runner and ZooKeeper would do with its steps. */
  private static final class World {
    final long[] now = {1_000};
    final PlaceState state;
    final boolean readers;
    final int bound;
    final List<Contender> members = new ArrayList<>();
    final Map<Contender, List<Class<?>>> heard = new HashMap<>(); // each member's notices, in order
    final List<String> violations = new ArrayList<>();
    final Deque<Integer> reads = new ArrayDeque<>(); // places whose read of the queue is out
    final Deque<long[]> timers = new ArrayDeque<>(); // {place, due} armed, not fired
    final Deque<Integer> withdrawn = new ArrayDeque<>(); // place attempts withdrawn by the table
    final Deque<int[]> writes = new ArrayDeque<>(); // {place, write} sent, not answered
    int pendingTake; // the place attempt under way, 0 if none
    boolean nodeHeld; // the place's node exists (granted, not given back or lost)
    boolean lostUnheard; // the node is gone and the place's attempt knows, its notice not sent
    boolean placeAtRisk; // the place's connection is suspended, as last told
    boolean unused; // the last lock object on the place closed
    boolean retireAsked; // a Retire step went out since the place was last used
    boolean writerWaits; // a writer of this process waits (shared reads only)
    long zxid = 100;

    World(boolean readers, int bound) {
      this.readers = readers;
      this.bound = bound;
      LongClock clock = new LongClock(now);
      this.state = readers ? PlaceState.sharedReads(clock) : new PlaceState(clock);
    }

    void act(Action action) {
      int place = state.currentPlace();
      switch (action) {
        case JOIN, JOIN_LINGERING -> {
          if (!unused) {
            join(action == Action.JOIN_LINGERING ? LINGER : 0);
          }
        }
        case GRANT_PLACE, GRANT_PLACE_WITH_OTHERS -> grantPlace(action == Action.GRANT_PLACE);
        case DECIDE_PLACE -> {
          if (pendingTake != 0) {
            apply(new PlaceEvent.PlaceDecided(pendingTake));
          }
        }
        case FAIL_PLACE -> {
          if (pendingTake != 0) {
            int failed = pendingTake;
            pendingTake = 0;
            apply(new PlaceEvent.PlaceEnded(failed, new LockException("create failed", null)));
          }
        }
        case STALE_GRANT -> {
          Integer stale = withdrawn.poll();
          if (stale != null) { // a grant that raced the withdrawal: the runner releases it
            apply(new PlaceEvent.PlaceGranted(stale, node(stale), 1, ++zxid, false, true, false));
          }
        }
        case RELEASE -> {
          Contender holder = firstHolding();
          if (holder != null) {
            release(holder);
          }
        }
        case RELEASE_AGAIN -> {
          for (Contender member : members) {
            if (state.phaseOf(member) == Phase.RELEASED) {
              release(member); // a second release only completes its future
              break;
            }
          }
        }
        case WITHDRAW -> {
          for (Contender member : members) {
            if (state.phaseOf(member) == Phase.WAITING) {
              apply(new PlaceEvent.Withdraw(member));
              break;
            }
          }
        }
        case AT_RISK, RESTORED -> {
          if (nodeHeld && !lostUnheard) {
            placeAtRisk = action == Action.AT_RISK;
            LockState change = placeAtRisk ? LockState.AT_RISK : LockState.HELD;
            apply(new PlaceEvent.PlaceChanged(place, change));
          }
        }
        case LOSE_PLACE -> {
          if (nodeHeld || lostUnheard) {
            loseNode();
            hearLoss(place);
          }
        }
        case LOSE_PLACE_UNHEARD -> {
          if (nodeHeld) {
            loseNode();
            lostUnheard = true;
          }
        }
        case HEAR_LOSS -> {
          if (lostUnheard) {
            hearLoss(place);
          }
        }
        case QUEUE_CHANGED -> apply(new PlaceEvent.QueueChanged(place));
        case READ_ALONE, READ_OTHERS -> {
          Integer read = reads.poll();
          if (read != null) {
            boolean lost = lostUnheard && read == place;
            apply(new PlaceEvent.QueueChecked(read, action == Action.READ_ALONE, lost));
          }
        }
        case LINGER_DUE -> fireTimer();
        case UNUSED -> {
          unused = true;
          apply(new PlaceEvent.Unused());
        }
        case USED -> {
          if (unused) {
            unused = false;
            retireAsked = false;
            apply(new PlaceEvent.Used());
          }
        }
        case WRITER_WAITS -> {
          if (readers && !writerWaits) {
            writerWaits = true;
            apply(new PlaceEvent.LocalWriter(true, false));
          }
        }
        case WRITER_STOPS -> stopWriter();
      }
    }

    /**
     * The faults heal: every request the place sent is answered as a healthy server answers, every
     * holder lets go, every linger runs out. Within a bound nothing waits, holds or is kept.
     */
    void heal() {
      stopWriter();
      int rounds = 0;
      int limit = 8 * members.size() + 16;
      while (busy()) {
        if (++rounds > limit) {
          violations.add(
              "still busy after "
                  + limit
                  + " healthy rounds: place "
                  + state.placePhase()
                  + ", members "
                  + members.stream().map(state::phaseOf).toList());
          return;
        }
        int place = state.currentPlace();
        if (lostUnheard) {
          hearLoss(place);
        }
        while (!reads.isEmpty()) {
          int read = reads.poll();
          apply(new PlaceEvent.QueueChecked(read, true, false));
        }
        while (!writes.isEmpty()) {
          int[] write = writes.poll();
          apply(new PlaceEvent.FenceWritten(write[0], write[1], ++zxid, 1, false));
        }
        if (pendingTake != 0) {
          grantPlace(true);
        } else if (placeAtRisk && nodeHeld) {
          placeAtRisk = false;
          apply(new PlaceEvent.PlaceChanged(place, LockState.HELD));
        }
        Contender holder;
        while ((holder = firstHoldingOrLost()) != null) {
          release(holder);
        }
        if (!timers.isEmpty()) {
          fireTimer();
        }
      }
      for (Contender member : members) {
        List<Class<?>> notices = heard.getOrDefault(member, List.of());
        long endings =
            notices.stream()
                .filter(c -> c == PlaceStep.Released.class || c == PlaceStep.Ended.class)
                .count();
        if (endings != 1) {
          violations.add("a member heard " + endings + " endings: " + names(notices));
        }
      }
      if (nodeHeld) {
        violations.add("the place's node is left behind: place " + state.placePhase());
      }
      if (unused && !retireAsked) {
        violations.add("an unused, idle place never asked to be dropped");
      }
    }

    private boolean busy() {
      if (pendingTake != 0 || !reads.isEmpty() || !timers.isEmpty() || lostUnheard) {
        return true;
      }
      if (state.placePhase() != PlaceState.Phase.NONE) {
        return true;
      }
      for (Contender member : members) {
        Phase phase = state.phaseOf(member);
        if (phase.isWaiting() || phase.isHolding() || phase == Phase.LOST) {
          return true;
        }
      }
      return false;
    }

    private void join(long linger) {
      Contender member = new Contender(bound, linger, null);
      members.add(member);
      apply(new PlaceEvent.Join(member, state.currentPlace(), lostUnheard));
    }

    private void grantPlace(boolean alone) {
      if (pendingTake == 0) {
        return;
      }
      int granted = pendingTake;
      pendingTake = 0;
      nodeHeld = true;
      apply(new PlaceEvent.PlaceGranted(granted, node(granted), 1, ++zxid, false, alone, false));
    }

    private void release(Contender holder) {
      int place = state.currentPlace();
      apply(new PlaceEvent.Release(holder, place, lostUnheard, new CompletableFuture<>()));
    }

    private void loseNode() {
      nodeHeld = false;
      placeAtRisk = false;
      zxid++;
    }

    private void hearLoss(int place) {
      lostUnheard = false;
      apply(new PlaceEvent.PlaceChanged(place, LockState.LOST));
    }

    private void fireTimer() {
      long[] timer = timers.poll();
      if (timer != null) {
        now[0] = Math.max(now[0], timer[1]);
        apply(new PlaceEvent.LingerDue((int) timer[0], timer[1]));
      }
    }

    private void stopWriter() {
      if (readers && writerWaits) {
        writerWaits = false;
        apply(new PlaceEvent.LocalWriter(false, false));
      }
    }

    private Contender firstHolding() {
      for (Contender member : members) {
        if (state.phaseOf(member).isHolding()) {
          return member;
        }
      }
      return null;
    }

    private Contender firstHoldingOrLost() {
      for (Contender member : members) {
        Phase phase = state.phaseOf(member);
        if (phase.isHolding() || phase == Phase.LOST) {
          return member;
        }
      }
      return null;
    }

    private static String node(int place) {
      return String.format("/lock/_c_p-lock-%010d", place);
    }

    /** Applies {@code event} and plays the runner and the server for each step it answers. */
    private void apply(PlaceEvent event) {
      for (PlaceStep step : state.on(event)) {
        carryOut(step);
      }
      if (!readers) {
        long holding = members.stream().filter(m -> state.phaseOf(m).isHolding()).count();
        if (holding > 1) {
          violations.add(holding + " members hold the mutex's place at once after " + event);
        }
      }
    }

    private void carryOut(PlaceStep step) {
      if (step == null) {
        violations.add("a step that is null");
      } else if (step instanceof PlaceStep.Take take) {
        pendingTake = take.place();
      } else if (step instanceof PlaceStep.WithdrawPlace withdraw) {
        if (pendingTake == withdraw.place()) {
          pendingTake = 0;
          withdrawn.add(withdraw.place());
        }
      } else if (step instanceof PlaceStep.GiveBack) {
        nodeHeld = false;
        placeAtRisk = false;
        lostUnheard = false; // the attempt ends: its loss, if any, is nobody's news now
      } else if (step instanceof PlaceStep.LingerTimer timer) {
        timers.add(new long[] {timer.place(), timer.due()});
      } else if (step instanceof PlaceStep.Retire) {
        if (!unused) {
          violations.add("asked to be dropped while a lock object is open");
        }
        retireAsked = true;
      } else if (step instanceof PlaceStep.CheckQueue check) {
        reads.add(check.place());
      } else if (step instanceof PlaceStep.Write write) {
        writes.add(new int[] {write.place(), write.write()});
      } else if (step instanceof PlaceStep.Grant grant) {
        heardBy(grant.member(), PlaceStep.Grant.class);
      } else if (step instanceof PlaceStep.Ended ended) {
        heardBy(ended.member(), PlaceStep.Ended.class);
      } else if (step instanceof PlaceStep.Released released) {
        heardBy(released.member(), PlaceStep.Released.class);
      }
    }

    private void heardBy(Contender member, Class<?> notice) {
      List<Class<?>> notices = heard.computeIfAbsent(member, m -> new ArrayList<>());
      boolean ended =
          notices.contains(PlaceStep.Released.class) || notices.contains(PlaceStep.Ended.class);
      if (ended) {
        violations.add("heard " + notice.getSimpleName() + " after its end: " + names(notices));
      } else if (notice == PlaceStep.Grant.class && notices.contains(PlaceStep.Grant.class)) {
        violations.add("granted twice");
      } else if (notice == PlaceStep.Released.class && !notices.contains(PlaceStep.Grant.class)) {
        violations.add("released without a grant");
      } else if (notice == PlaceStep.Ended.class && notices.contains(PlaceStep.Grant.class)) {
        violations.add("ended without a grant after its grant");
      }
      notices.add(notice);
    }

    private static List<String> names(List<Class<?>> notices) {
      return notices.stream().map(Class::getSimpleName).toList();
    }
  }

  /** The place's clock: a value the test moves. */
  private record LongClock(long[] now) implements java.util.function.LongSupplier {
    @Override
    public long getAsLong() {
      return now[0];
    }
  }
}

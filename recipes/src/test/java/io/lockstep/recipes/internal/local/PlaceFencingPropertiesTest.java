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
 * The fencing rule of a place shared by local holds, over any run of events: a place driven by
 * random joins, releases, fence requests, checks taken, answers (written, failed, read), losses and
 * withdrawals, against a model of ZooKeeper's zxids and of the node's version. Whatever the run:
 *
 * <ul>
 *   <li>every token handed to a local hold is greater than every token handed out before it;
 *   <li>when a hold is granted, no other hold's ownership checks would still commit (the node's
 *       version moved, or the node is gone).
 * </ul>
 */
class PlaceFencingPropertiesTest {
  private static final String NODE = "/lock/_c_p-lock-0000000001";

  /** What can happen next. */
  enum Action {
    JOIN,
    GRANT_PLACE,
    RELEASE,
    ASK_FENCE,
    TAKE_CHECKS,
    WRITE_LANDS,
    WRITE_FAILS,
    READ_ALONE,
    READ_OTHERS,
    LOSE_PLACE,
    QUEUE_CHANGED,
    WITHDRAW
  }

  @Provide
  Arbitrary<List<Action>> runs() {
    return Arbitraries.of(Action.class).list().ofMinSize(1).ofMaxSize(120);
  }

  @Property(tries = 1000)
  void tokensOnlyGoUp_andEarlierChecksFailBeforeTheNextHold(
      @ForAll("runs") List<Action> run, @ForAll @IntRange(min = 1, max = 3) int bound) {
    Model model = new Model(bound);
    for (Action action : run) {
      model.act(action);
    }
    assertThat(model.violations).isEmpty();
  }

  /** ZooKeeper as far as the place can tell: zxids, the place's node and its version. */
  private static final class Model {
    final PlaceState state = new PlaceState(() -> 0); // no linger here: the clock stands
    final int bound;
    final List<Contender> members = new ArrayList<>();
    final List<String> violations = new ArrayList<>();
    final Deque<int[]> writes = new ArrayDeque<>(); // {place, write} sent, not answered
    final Deque<Integer> reads = new ArrayDeque<>(); // places whose read at the bound is out
    final Map<Contender, long[]> checks = new HashMap<>(); // {generation, version} taken
    final Map<Contender, Long> tokens = new HashMap<>();
    int pendingTake; // the place attempt to grant next, 0 if none
    long zxid = 100; // the last zxid ZooKeeper assigned
    long highestToken; // the highest token handed out so far
    int generation; // counts the place's nodes
    int version; // the current node's version
    boolean nodeExists;

    Model(int bound) {
      this.bound = bound;
    }

    void act(Action action) {
      int place = state.currentPlace();
      Contender holder = holder();
      switch (action) {
        case JOIN -> {
          Contender joining = new Contender(bound, null);
          members.add(joining);
          apply(state.on(new PlaceEvent.Join(joining)));
        }
        case GRANT_PLACE -> {
          if (pendingTake == place && state.placePhase() == PlaceState.Phase.TAKING) {
            pendingTake = 0;
            generation++;
            version = 0;
            nodeExists = true;
            long decided = ++zxid; // decided at our node's creation or a deletion after it
            apply(
                state.on(
                    new PlaceEvent.PlaceGranted(
                        place, NODE, 1, decided, false, zxid % 2 == 0, false)));
          }
        }
        case RELEASE -> {
          if (holder != null) {
            apply(state.on(new PlaceEvent.Release(holder, place, false, null)));
          }
        }
        case ASK_FENCE -> {
          if (holder != null) {
            apply(state.on(new PlaceEvent.FenceAsked(holder, new CompletableFuture<>())));
          }
        }
        case TAKE_CHECKS -> {
          if (holder != null) {
            PlaceState.Held held = state.takeChecks(holder);
            if (held != null) {
              checks.put(holder, new long[] {generation, held.version()});
            }
          }
        }
        case WRITE_LANDS, WRITE_FAILS -> answerWrite(action == Action.WRITE_LANDS);
        case READ_ALONE, READ_OTHERS -> {
          Integer read = reads.poll();
          if (read != null) {
            apply(state.on(new PlaceEvent.QueueChecked(read, action == Action.READ_ALONE, false)));
          }
        }
        case LOSE_PLACE -> {
          if (state.placePhase() == PlaceState.Phase.HELD) {
            deleteNode(); // the session expired: ZooKeeper deleted the node
            apply(state.on(new PlaceEvent.PlaceChanged(place, LockState.LOST)));
          }
        }
        case QUEUE_CHANGED -> apply(state.on(new PlaceEvent.QueueChanged(place)));
        case WITHDRAW -> {
          for (Contender member : members) {
            if (state.phaseOf(member) == Phase.WAITING) {
              apply(state.on(new PlaceEvent.Withdraw(member)));
              break;
            }
          }
        }
      }
    }

    /** A write lands, or fails with its outcome unknown (applied or not: both are tried). */
    void answerWrite(boolean lands) {
      int[] write = writes.poll();
      if (write == null) {
        return;
      }
      boolean applied = lands || zxid % 3 == 0;
      if (applied && nodeExists && write[0] == state.currentPlace()) {
        zxid++;
        version++;
      }
      if (lands) {
        apply(state.on(new PlaceEvent.FenceWritten(write[0], write[1], zxid, version, false)));
      } else {
        apply(
            state.on(
                new PlaceEvent.FenceFailed(
                    write[0], write[1], false, new LockException("connection lost", null))));
      }
    }

    Contender holder() {
      for (Contender member : members) {
        Phase phase = state.phaseOf(member);
        if (phase == Phase.HELD || phase == Phase.AT_RISK) {
          return member;
        }
      }
      return null;
    }

    void deleteNode() {
      if (nodeExists) {
        nodeExists = false;
        zxid++;
      }
    }

    void apply(List<PlaceStep> steps) {
      for (PlaceStep step : steps) {
        if (step instanceof PlaceStep.Take take) {
          pendingTake = take.place();
        } else if (step instanceof PlaceStep.GiveBack) {
          deleteNode();
        } else if (step instanceof PlaceStep.Write write) {
          writes.add(new int[] {write.place(), write.write()});
        } else if (step instanceof PlaceStep.CheckQueue check) {
          reads.add(check.place());
        } else if (step instanceof PlaceStep.Grant grant) {
          granted(grant.member(), grant.token());
        } else if (step instanceof PlaceStep.FenceReady ready) {
          handedOut(ready.member(), ready.member().token);
        }
      }
    }

    void granted(Contender member, long token) {
      if (token != 0) {
        handedOut(member, token);
      }
      checks.forEach(
          (other, taken) -> {
            if (other != member && nodeExists && taken[0] == generation && taken[1] == version) {
              violations.add(
                  "granted while an earlier hold's checks of version " + version + " still pass");
            }
          });
    }

    void handedOut(Contender member, long token) {
      Long earlier = tokens.putIfAbsent(member, token);
      if (earlier != null) {
        if (earlier != token) {
          violations.add("a hold's token changed from " + earlier + " to " + token);
        }
        return;
      }
      if (token <= highestToken) {
        violations.add("token " + token + " not above " + highestToken + " handed out before");
      }
      highestToken = Math.max(highestToken, token);
    }
  }
}

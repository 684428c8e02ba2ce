package io.lockstep.recipes.internal.owner;

import static org.assertj.core.api.Assertions.assertThat;

import io.lockstep.recipes.internal.engine.Attempt;
import io.lockstep.recipes.internal.engine.Budget;
import io.lockstep.recipes.locks.LockException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * A lease request over any run of events: the attempts its steps start answer in any order (a
 * verdict, a grant, a grant already lost, a failure, the mutex's loss), the deadline and cancels
 * come at any moment, and every withdrawal and expiry it asks for is answered consistently with
 * what the attempt did (an attempt granted before its withdrawal is answered GRANTED). Whatever the
 * run, once no answer is out:
 *
 * <ul>
 *   <li>the request ended exactly once (one Succeed or Finish), and started nothing after it;
 *   <li>every attempt it knew to be granted is given back exactly once (released, or in its
 *       ending's leases or mutex), or handed to the caller by Succeed; a success hands over exactly
 *       {@code qty} leases and never the mutex;
 *   <li>no step names an attempt that was not started;
 *   <li>no lease starts to wait under a mutex whose loss was heard (a loss may be heard before the
 *       mutex's grant: the runner reads the grant's state apart from feeding it).
 * </ul>
 *
 * Every run is given the deadline at its end, and then its answers, so every run ends.
 */
class LeaseMachinePropertiesTest {
  private static final long BUDGET = TimeUnit.SECONDS.toNanos(1);

  @Provide
  Arbitrary<List<Integer>> runs() {
    return Arbitraries.integers().between(0, 1_000).list().ofMinSize(0).ofMaxSize(80);
  }

  @Property(tries = 2000)
  void everyGrantedAttemptIsGivenBackOrHandedOverOnce_andTheRequestEndsOnce(
      @ForAll("runs") List<Integer> run, @ForAll @IntRange(min = 1, max = 3) int qty) {
    Simulation sim = new Simulation(qty);
    sim.feed(new LeaseEvent.Begin());
    for (int choice : run) {
      List<LeaseEvent> enabled = sim.enabled();
      if (enabled.isEmpty()) {
        break;
      }
      sim.feed(enabled.get(choice % enabled.size()));
    }
    // Every run ends: the deadline, then answers to whatever is still out, in order.
    sim.feed(new LeaseEvent.Deadline());
    for (int i = 0; i < 100 && !sim.answersOut().isEmpty(); i++) {
      sim.feed(sim.answersOut().get(0));
    }
    assertThat(sim.answersOut()).as("answers still out").isEmpty();
    sim.checkEnded();
  }

  /** The attempts as ZooKeeper and the engine would answer them, and everything the steps did. */
  private static final class Simulation {
    final int qty;
    long now = 0;
    final LeaseMachine machine;
    final Map<Integer, String> kinds = new HashMap<>(); // fast, mutex, lease
    final Set<Integer> inFlight = new HashSet<>(); // started, no grant or end heard
    final Set<Integer> decided = new HashSet<>(); // fast tries whose verdict was heard
    final Set<Integer> granted = new HashSet<>(); // known to the request as granted
    final Set<Integer> grantHeard = new HashSet<>(); // a Granted event without failure came
    final Map<Integer, Boolean> withdrawals = new HashMap<>(); // out: attempt -> granted first
    final Set<Integer> expiries = new HashSet<>();
    final Set<Integer> mutexesLost = new HashSet<>();
    final List<Integer> givenBack = new ArrayList<>();
    final List<LeaseStep> endings = new ArrayList<>();
    boolean deadlinePassed;
    int lastMutex = LeaseMachine.NONE; // the mutex attempt started last

    /** Granted, as the engine knows: its grant was heard, or its loss (told only after a grant). */
    boolean grantedAsFarAsKnown(int id) {
      return grantHeard.contains(id) || mutexesLost.contains(id);
    }

    Simulation(int qty) {
      this.qty = qty;
      this.machine = new LeaseMachine(qty, Budget.of(BUDGET, () -> now), () -> now);
    }

    void feed(LeaseEvent event) {
      now += TimeUnit.MILLISECONDS.toNanos(50);
      if (event instanceof LeaseEvent.Deadline) {
        deadlinePassed = true;
      }
      learn(event);
      for (LeaseStep step : machine.on(event)) {
        apply(step);
      }
    }

    /** What the event tells of the attempt, as the runner's attempt would see it. */
    private void learn(LeaseEvent event) {
      if (event instanceof LeaseEvent.Granted grant) {
        inFlight.remove(grant.attempt());
        if (grant.failure() == null) {
          if (withdrawals.containsKey(grant.attempt())) {
            withdrawals.put(grant.attempt(), true); // its withdrawal must answer GRANTED
          }
          grantHeard.add(grant.attempt());
        }
      } else if (event instanceof LeaseEvent.FastDecided d) {
        decided.add(d.attempt());
      } else if (event instanceof LeaseEvent.Withdrawn w) {
        withdrawals.remove(w.attempt());
        inFlight.remove(w.attempt());
        if (w.outcome() == Attempt.Outcome.GRANTED) {
          granted.add(w.attempt());
        }
      } else if (event instanceof LeaseEvent.Expired e) {
        expiries.remove(e.attempt());
        inFlight.remove(e.attempt());
        if (e.ending() == Waits.Ending.GRANTED) {
          granted.add(e.attempt());
        }
      } else if (event instanceof LeaseEvent.MutexLost l) {
        mutexesLost.add(l.attempt()); // told only after its grant, heard or not
        withdrawals.computeIfPresent(l.attempt(), (id, grantedFirst) -> true);
      }
    }

    private void apply(LeaseStep step) {
      for (int id : idsOf(step)) {
        assertThat(kinds).as("%s names a started attempt", step).containsKey(id);
      }
      if (!endings.isEmpty()) {
        assertThat(step)
            .as("nothing starts after the ending")
            .isNotInstanceOfAny(
                LeaseStep.StartFast.class, LeaseStep.StartMutex.class, LeaseStep.StartLease.class);
      }
      if (step instanceof LeaseStep.StartFast s) {
        started(s.attempt(), "fast");
      } else if (step instanceof LeaseStep.StartMutex s) {
        started(s.attempt(), "mutex");
        lastMutex = s.attempt();
      } else if (step instanceof LeaseStep.StartLease s) {
        assertThat(mutexesLost).as("%s waits under a lost mutex", s).doesNotContain(lastMutex);
        started(s.attempt(), "lease");
      } else if (step instanceof LeaseStep.Withdraw w) {
        withdrawals.put(w.attempt(), grantedAsFarAsKnown(w.attempt()));
      } else if (step instanceof LeaseStep.Expire e) {
        expiries.add(e.attempt());
      } else if (step instanceof LeaseStep.Release r) {
        givenBack.add(r.attempt());
      } else if (step instanceof LeaseStep.Succeed s) {
        endings.add(s);
        assertThat(s.leases()).as("a success hands over qty leases").hasSize(qty);
        for (int lease : s.leases()) {
          assertThat(kinds.get(lease)).isNotEqualTo("mutex");
        }
        if (s.mutex() != LeaseMachine.NONE) {
          givenBack.add(s.mutex());
        }
      } else if (step instanceof LeaseStep.Finish f) {
        endings.add(f);
        givenBack.addAll(f.leases());
        if (f.mutex() != LeaseMachine.NONE) {
          givenBack.add(f.mutex());
        }
      }
    }

    private void started(int id, String kind) {
      assertThat(kinds).as("ids are fresh").doesNotContainKey(id);
      kinds.put(id, kind);
      inFlight.add(id);
    }

    /** The events that may come next. */
    List<LeaseEvent> enabled() {
      List<LeaseEvent> events = new ArrayList<>(answersOut());
      for (int id : inFlight) {
        if (kinds.get(id).equals("fast")) {
          if (!decided.contains(id)) {
            events.add(new LeaseEvent.FastDecided(id));
          }
        } else {
          events.add(new LeaseEvent.Granted(id, null, false));
          if (!mutexesLost.contains(id)) {
            events.add(new LeaseEvent.Granted(id, new LockException("failed", null), false));
          }
          if (kinds.get(id).equals("mutex")) {
            events.add(new LeaseEvent.Granted(id, null, true));
          }
        }
      }
      for (Map.Entry<Integer, String> started : kinds.entrySet()) {
        int id = started.getKey();
        // A mutex in flight may be granted now, and lost before its grant is heard.
        boolean granted = grantHeard.contains(id) || inFlight.contains(id);
        if (started.getValue().equals("mutex") && granted && !mutexesLost.contains(id)) {
          events.add(new LeaseEvent.MutexLost(id));
        }
      }
      if (!deadlinePassed) {
        events.add(new LeaseEvent.Deadline());
      }
      events.add(new LeaseEvent.Cancel(new CompletableFuture<>(), null));
      return events;
    }

    /** Answers to the withdrawals and expiries out, each consistent with its attempt. */
    List<LeaseEvent> answersOut() {
      List<LeaseEvent> answers = new ArrayList<>();
      withdrawals.forEach(
          (id, grantedFirst) -> {
            if (grantedFirst) {
              answers.add(new LeaseEvent.Withdrawn(id, Attempt.Outcome.GRANTED));
            } else {
              answers.add(new LeaseEvent.Withdrawn(id, Attempt.Outcome.WITHDRAWN));
              answers.add(new LeaseEvent.Withdrawn(id, Attempt.Outcome.GRANTED));
              answers.add(new LeaseEvent.Withdrawn(id, Attempt.Outcome.FAILED));
            }
          });
      for (int id : expiries) {
        if (grantedAsFarAsKnown(id)) {
          answers.add(new LeaseEvent.Expired(id, Waits.Ending.GRANTED));
        } else {
          for (Waits.Ending ending : Waits.Ending.values()) {
            answers.add(new LeaseEvent.Expired(id, ending));
          }
        }
      }
      return answers;
    }

    void checkEnded() {
      assertThat(endings).as("one ending").hasSize(1);
      assertThat(machine.stage()).isEqualTo(LeaseMachine.Stage.ENDED);
      Set<Integer> held = new HashSet<>(granted);
      for (int id : grantHeard) {
        // A grant the request heard directly (not through a withdrawal or an expiry).
        held.add(id);
      }
      held.addAll(mutexesLost); // granted, though its grant may never have been heard
      List<Integer> handedOver =
          endings.get(0) instanceof LeaseStep.Succeed s ? s.leases() : List.of();
      for (int id : held) {
        long times = givenBack.stream().filter(g -> g == id).count();
        long handed = handedOver.stream().filter(h -> h == id).count();
        assertThat(times + handed)
            .as(
                "attempt %d (%s), granted: given back %d, handed over %d",
                id, kinds.get(id), times, handed)
            .isEqualTo(1);
      }
      // A mutex still in flight at the ending is in its Finish too: the runner awaits its cleanup.
      assertThat(held)
          .as("only granted attempts are given back")
          .containsAll(givenBack.stream().filter(id -> !kinds.get(id).equals("mutex")).toList());
    }

    private static List<Integer> idsOf(LeaseStep step) {
      List<Integer> ids = new ArrayList<>();
      if (step instanceof LeaseStep.Withdraw w) {
        ids.add(w.attempt());
      } else if (step instanceof LeaseStep.Release r) {
        ids.add(r.attempt());
      } else if (step instanceof LeaseStep.Expire e) {
        ids.add(e.attempt());
      } else if (step instanceof LeaseStep.Carry c) {
        ids.add(c.attempt());
      } else if (step instanceof LeaseStep.Succeed s) {
        ids.addAll(s.leases());
        ids.add(s.mutex());
      } else if (step instanceof LeaseStep.Finish f) {
        ids.addAll(f.leases());
        ids.add(f.mutex());
        ids.add(f.inFlight());
      }
      ids.removeIf(id -> id == LeaseMachine.NONE);
      return ids;
    }
  }
}

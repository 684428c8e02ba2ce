package io.lockstep.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The process fault suite's checks on histories built by hand: each check reports the fault it is
 * there to find, and lets pass what the rules allow (a frozen holder's overlap, a refusal of a
 * holder that was told, a wait during a fault).
 *
 * <pre>
 * mvn -B -q verify -pl recipes-test -Dtest='ProcessFaultCheckersTest' -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 */
@Timeout(10)
class ProcessFaultCheckersTest {
  private static final GroupSpec MUTEX =
      Groups.mutex("g", ClientVariant.PLAIN, ClientVariant.PLAIN);
  private static final GroupSpec SEMAPHORE =
      Groups.semaphore("s", ClientVariant.PLAIN, ClientVariant.PLAIN, ClientVariant.PLAIN);
  private static final String LOCK = "/pf/g/lock";
  private static final String PARTS = "MUTEX:" + LOCK;

  private static HandMadeHistory twoWorkers() {
    return new HandMadeHistory().group(MUTEX, 1, 2).session(1, 0, 0x11).session(2, 0, 0x22);
  }

  @Test
  void overlappingCountingHolds_areAnExclusionViolation() {
    Findings findings =
        twoWorkers()
            .grant(1, 100, "1.a", 10, 0x11, PARTS)
            .grant(2, 200, "2.a", 20, 0x22, PARTS)
            .end(1, 300, "1.a")
            .end(2, 400, "2.a")
            .safety(0, 1_000);

    assertThat(findings.violations("exclusion")).isNotEmpty();
  }

  @Test
  void aHolderFrozenPastItsSession_isExcused_butMustBeToldLostAfterTheThaw() {
    HandMadeHistory history =
        twoWorkers()
            .grant(1, 100, "1.a", 10, 0x11, PARTS)
            .fault(FaultKind.FREEZE_HOLDER, "g", 1, 200, 5_800, 0x11)
            .grant(2, 4_600, "2.a", 20, 0x22, PARTS)
            .end(2, 5_000, "2.a");
    Findings untold = history.safety(0, 10_000);
    assertThat(untold.violations("exclusion")).isEmpty();
    assertThat(untold.violations("frozen holder told LOST"))
        .singleElement()
        .satisfies(v -> assertThat(v.detail()).contains("never told LOST"));

    Findings told = history.state(1, 6_100, "1.a", "LOST").end(1, 6_200, "1.a").safety(0, 10_000);
    assertThat(told.violations()).isEmpty();
    assertThat(told.figure("holds frozen past their session")).isEqualTo(1);
  }

  @Test
  void aFrozenHolderToldLostTooLate_orHeldAgain_isAViolation() {
    Findings late =
        twoWorkers()
            .grant(1, 100, "1.a", 10, 0x11, PARTS)
            .fault(FaultKind.FREEZE_HOLDER, "g", 1, 200, 5_800, 0x11)
            .state(1, 5_800 + Bounds.BOUND_MS + 500, "1.a", "LOST")
            .safety(0, 20_000);
    assertThat(late.violations("frozen holder told LOST")).hasSize(1);

    Findings heldAgain =
        twoWorkers()
            .grant(1, 100, "1.a", 10, 0x11, PARTS)
            .fault(FaultKind.FREEZE_HOLDER, "g", 1, 200, 5_800, 0x11)
            .state(1, 5_900, "1.a", "AT_RISK")
            .state(1, 6_000, "1.a", "HELD")
            .state(1, 6_100, "1.a", "LOST")
            .safety(0, 20_000);
    assertThat(heldAgain.violations("frozen holder never HELD again")).hasSize(1);
  }

  @Test
  void aHoldWhoseClientExpiredItsSession_mustBeToldLost_unlessReleasedAtOnce() {
    Findings untold =
        twoWorkers()
            .grant(1, 100, "1.a", 10, 0x11, PARTS)
            .fault(FaultKind.CLIENT_EXPIRY, "g", 1, 200, 200, 0x11)
            .end(1, 2_000, "1.a")
            .safety(0, 5_000);
    assertThat(untold.violations("frozen holder told LOST")).hasSize(1);

    Findings releasedAtOnce =
        twoWorkers()
            .grant(1, 100, "1.a", 10, 0x11, PARTS)
            .fault(FaultKind.CLIENT_EXPIRY, "g", 1, 200, 200, 0x11)
            .end(1, 250, "1.a")
            .safety(0, 5_000);
    assertThat(releasedAtOnce.violations()).isEmpty();
    assertThat(releasedAtOnce.figure("holds released before their client's expiry was heard"))
        .isEqualTo(1);
  }

  @Test
  void aHolderNotFrozen_isNotExcused_whenItsSessionLivesOn() {
    Findings findings =
        twoWorkers()
            .grant(1, 100, "1.a", 10, 0x11, PARTS)
            .fault(FaultKind.FREEZE_HOLDER, "g", 1, 200, 1_200, 0x11) // within the session
            .grant(2, 1_000, "2.a", 20, 0x22, PARTS)
            .end(1, 1_500, "1.a")
            .end(2, 1_600, "2.a")
            .safety(0, 5_000);

    assertThat(findings.violations("exclusion")).isNotEmpty();
  }

  @Test
  void aStaleWriteAcceptedByTheStore_isReported() {
    Findings findings =
        twoWorkers()
            .grant(1, 100, "1.a", 10, 0x11, PARTS)
            .end(1, 200, "1.a")
            .grant(2, 300, "2.a", 20, 0x22, PARTS)
            .stored(2, 310, "2.a", LOCK, 20, true)
            .stored(1, 320, "1.a", LOCK, 10, true)
            .end(2, 400, "2.a")
            .safety(0, 1_000);

    assertThat(findings.violations("store order"))
        .singleElement()
        .satisfies(v -> assertThat(v.detail()).contains("stale write accepted"));
  }

  @Test
  void theStoreMayRefuseOnlyAHolderToldOrOvertaken() {
    Findings refusedCurrent =
        twoWorkers()
            .grant(1, 100, "1.a", 10, 0x11, PARTS)
            .stored(1, 150, "1.a", LOCK, 10, false)
            .end(1, 200, "1.a")
            .safety(0, 1_000);
    assertThat(refusedCurrent.violations("store refusal")).hasSize(1);

    Findings refusedTold =
        twoWorkers()
            .grant(1, 100, "1.a", 10, 0x11, PARTS)
            .state(1, 140, "1.a", "AT_RISK")
            .stored(1, 150, "1.a", LOCK, 10, false)
            .end(1, 200, "1.a")
            .safety(0, 1_000);
    assertThat(refusedTold.violations()).isEmpty();

    Findings refusedOvertaken =
        twoWorkers()
            .grant(1, 100, "1.a", 10, 0x11, PARTS)
            .fault(FaultKind.FREEZE_HOLDER, "g", 1, 110, 5_700, 0x11)
            .grant(2, 4_600, "2.a", 20, 0x22, PARTS)
            .stored(2, 4_610, "2.a", LOCK, 20, true)
            .end(2, 4_700, "2.a")
            .stored(1, 5_710, "1.a", LOCK, 10, false)
            .state(1, 6_000, "1.a", "LOST")
            .safety(0, 10_000);
    assertThat(refusedOvertaken.violations()).isEmpty();
  }

  @Test
  void aStaleCommit_andACommitAfterANewerGrant_areReported() {
    Findings findings =
        twoWorkers()
            .grant(1, 100, "1.a", 10, 0x11, PARTS)
            .commit(1, 110, "1.a", LOCK, 10, 12)
            .end(1, 200, "1.a")
            .grant(2, 300, "2.a", 20, 0x22, PARTS)
            .commit(2, 310, "2.a", LOCK, 20, 22)
            .commit(1, 320, "1.a", LOCK, 10, 23)
            .end(2, 400, "2.a")
            .safety(0, 1_000);

    assertThat(findings.violations("zookeeper order"))
        .extracting(Findings.Violation::detail)
        .anySatisfy(d -> assertThat(d).contains("stale write committed"))
        .anySatisfy(d -> assertThat(d).contains("after a hold of " + LOCK + " with token 20"));
  }

  @Test
  void commitsInTokenOrder_beforeTheNextGrant_areClean() {
    Findings findings =
        twoWorkers()
            .grant(1, 100, "1.a", 10, 0x11, PARTS)
            .commit(1, 110, "1.a", LOCK, 10, 12)
            .end(1, 200, "1.a")
            .grant(2, 300, "2.a", 20, 0x22, PARTS)
            .commit(2, 310, "2.a", LOCK, 20, 22)
            .end(2, 400, "2.a")
            .safety(0, 1_000);

    assertThat(findings.violations()).isEmpty();
    assertThat(findings.figure("zookeeper writes committed")).isEqualTo(2);
  }

  @Test
  void twoHoldsWithOneToken_areReported() {
    Findings findings =
        twoWorkers()
            .grant(1, 100, "1.a", 10, 0x11, PARTS)
            .end(1, 200, "1.a")
            .grant(2, 300, "2.a", 10, 0x22, PARTS)
            .end(2, 400, "2.a")
            .safety(0, 1_000);

    assertThat(findings.violations("distinct tokens")).hasSize(1);
  }

  @Test
  void moreLeasesThanTheSemaphoreHas_areReported() {
    String sem = "MUTEX:/pf/s/sem";
    Findings findings =
        new HandMadeHistory()
            .group(SEMAPHORE, 1, 2, 3)
            .grant(1, 100, "1.a", 10, 0x11, sem)
            .grant(2, 110, "2.a", 11, 0x22, sem)
            .grant(3, 120, "3.a", 12, 0x33, sem)
            .end(1, 200, "1.a")
            .end(2, 200, "2.a")
            .end(3, 200, "3.a")
            .safety(0, 1_000);

    assertThat(findings.violations("exclusion")).isNotEmpty();
  }

  @Test
  void aWorkerErrorIsAViolation() {
    Findings findings = twoWorkers().event(1, 100, "error", "t0", "boom").safety(0, 1_000);

    assertThat(findings.violations("worker error")).hasSize(1);
  }

  @Test
  void aWaitLongerThanTheBound_outsideFaults_isStarvation() {
    Findings starved =
        twoWorkers()
            .want(1, 1_000)
            .grant(1, 1_000 + Bounds.BOUND_MS + 1_000, "1.a", 10, 0x11, PARTS)
            .liveness(0, 20_000);
    assertThat(starved.violations("no waiter starved")).hasSize(1);

    Findings stillWaiting =
        twoWorkers().want(1, 1_000).liveness(0, 1_000 + Bounds.BOUND_MS + 1_000);
    assertThat(stillWaiting.violations("no waiter starved")).hasSize(1);
  }

  @Test
  void aWaitCountsFromTheHeal_ofTheServers_andFromTheStart_ofAnotherWorkersFault() {
    Findings afterServerHeal =
        twoWorkers()
            .fault(FaultKind.FREEZE_SERVER, null, -1, 500, 6_000, 0)
            .want(1, 1_000)
            .grant(1, 8_000, "1.a", 10, 0x11, PARTS)
            .liveness(0, 20_000);
    assertThat(afterServerHeal.violations()).isEmpty();
    assertThat(afterServerHeal.figure("longest wait outside faults (ms)")).isZero();

    Findings behindAFrozenHolder =
        twoWorkers()
            .fault(FaultKind.FREEZE_HOLDER, "g", 2, 500, 6_000, 0x22)
            .want(1, 1_000)
            .grant(1, 1_000 + Bounds.BOUND_MS + 1_000, "1.a", 10, 0x11, PARTS)
            .liveness(0, 20_000);
    assertThat(behindAFrozenHolder.violations("no waiter starved")).hasSize(1);
    assertThat(behindAFrozenHolder.violations("recovery")).hasSize(1);
  }

  @Test
  void aQueueDrainingInOrder_isNoStall_butALockHeldByNobodyWhileOthersWait_is() {
    Findings draining =
        twoWorkers()
            .fault(FaultKind.KILL_HOLDER, "g", 3, 100, 100, 0x33)
            .grant(2, 50, "2.a", 10, 0x22, PARTS)
            .want(1, 200)
            .end(2, 3_000, "2.a")
            .grant(1, 3_001, "1.a", 20, 0x11, PARTS)
            .end(1, 3_100, "1.a")
            .liveness(0, 10_000);
    assertThat(draining.violations("recovery")).isEmpty();

    Findings stalled =
        twoWorkers()
            .fault(FaultKind.KILL_HOLDER, "g", 3, 100, 100, 0x33)
            .grant(2, 50, "2.a", 10, 0x22, PARTS)
            .want(1, 200)
            .end(2, 300, "2.a")
            .grant(1, 300 + Bounds.BOUND_MS + 300, "1.a", 20, 0x11, PARTS)
            .liveness(0, 20_000);
    assertThat(stalled.violations("recovery")).hasSize(1);

    Findings stalledByTheNextFault =
        twoWorkers()
            .fault(FaultKind.KILL_HOLDER, "g", 3, 100, 100, 0x33)
            .grant(2, 50, "2.a", 10, 0x22, PARTS)
            .want(1, 200)
            .end(2, 300, "2.a")
            .fault(FaultKind.FREEZE_SERVER, null, -1, 400, 5_000, 0)
            .grant(1, 300 + Bounds.BOUND_MS + 300, "1.a", 20, 0x11, PARTS)
            .liveness(0, 20_000);
    assertThat(stalledByTheNextFault.violations("recovery")).isEmpty();
  }

  @Test
  void aTimedCallOverItsBudget_isReported_lessTheTimeItsProcessWasFrozen() {
    long budget = 1_000;
    long took = budget + Bounds.GRACE_MS + Bounds.NOISE_MS + 300;
    Findings over =
        twoWorkers()
            .event(1, 5_000, "attempt", "t0", "TIMED_OUT", took * 1_000_000L, budget, 1)
            .liveness(0, 10_000);
    assertThat(over.violations("budget")).hasSize(1);

    Findings frozenMeanwhile =
        twoWorkers()
            .fault(FaultKind.FREEZE_HOLDER, "g", 1, 4_500, 4_900, 0x11)
            .event(1, 5_000, "attempt", "t0", "TIMED_OUT", took * 1_000_000L, budget, 1)
            .liveness(0, 10_000);
    assertThat(frozenMeanwhile.violations("budget")).isEmpty();
  }

  @Test
  void aTimedCallOverItsBudget_namesWhereTheCallWatchSawItsThread_duringThatCallOnly() {
    long budget = 1_000;
    long took = budget + Bounds.GRACE_MS + Bounds.NOISE_MS + 300;
    Findings seen =
        twoWorkers()
            .event(1, 3_000, "overrun", "t0", "Earlier.call:1")
            .event(1, 4_900, "overrun", "t1", "OtherThread.call:2")
            .event(2, 4_900, "overrun", "t0", "OtherWorker.call:3")
            .event(1, 4_950, "overrun", "t0", "Parking.await:40<Waits.await:9")
            .event(1, 5_000, "attempt", "t0", "TIMED_OUT", took * 1_000_000L, budget, 1)
            .liveness(0, 10_000);

    assertThat(seen.violations("budget")).hasSize(1);
    assertThat(seen.violations("budget").get(0).detail())
        .endsWith("; the call watch saw its thread at Parking.await:40<Waits.await:9")
        .doesNotContain("Earlier", "OtherThread", "OtherWorker");
  }

  @Test
  void aTimedCallOverItsBudget_isExcused_onlyTheMeasuredPausesOfItsOwnProcess_eachInstantOnce() {
    long budget = 1_000;
    long took = budget + Bounds.GRACE_MS + Bounds.NOISE_MS + 350;
    Findings pausedMeanwhile =
        twoWorkers()
            .event(1, 4_900, "unscheduled", "meter", 400_000_000L)
            .event(1, 5_000, "attempt", "t0", "TIMED_OUT", took * 1_000_000L, budget, 1)
            .liveness(0, 10_000);
    assertThat(pausedMeanwhile.violations("budget")).isEmpty();

    Findings anotherProcessPaused =
        twoWorkers()
            .event(2, 4_900, "unscheduled", "meter", 400_000_000L)
            .event(1, 5_000, "attempt", "t0", "TIMED_OUT", took * 1_000_000L, budget, 1)
            .liveness(0, 10_000);
    assertThat(anotherProcessPaused.violations("budget")).hasSize(1);

    Findings pausedBeforeTheCall =
        twoWorkers()
            .event(1, 3_000, "unscheduled", "meter", 400_000_000L)
            .event(1, 5_000, "attempt", "t0", "TIMED_OUT", took * 1_000_000L, budget, 1)
            .liveness(0, 10_000);
    assertThat(pausedBeforeTheCall.violations("budget")).hasSize(1);

    // frozen 4,500 to 4,700 and paused 4,550 to 4,750: 250 ms, not 400, so still 100 ms over
    Findings overlapping =
        twoWorkers()
            .fault(FaultKind.FREEZE_HOLDER, "g", 1, 4_500, 4_700, 0x11)
            .event(1, 4_750, "unscheduled", "meter", 200_000_000L)
            .event(1, 5_000, "attempt", "t0", "TIMED_OUT", took * 1_000_000L, budget, 1)
            .liveness(0, 10_000);
    assertThat(overlapping.violations("budget")).hasSize(1);
  }

  @Test
  void anUnreachableVerdictOnALiveConnection_isANote_notAViolation() {
    Findings findings =
        twoWorkers()
            .event(1, 5_000, "attempt", "t0", "UNREACHABLE", 1_000_000_000L, 1_000, 1)
            .liveness(0, 10_000);

    assertThat(findings.violations()).isEmpty();
    assertThat(findings.figure("unreachable while connected")).isEqualTo(1);
    assertThat(findings.notes()).hasSize(1);
  }

  @Test
  void aNodeThatOutlivesItsOwnersInterest_isReported() {
    String node = LOCK + "/_c_x-lock-0000000001";
    HandMadeHistory history = twoWorkers().want(1, 100).idle(1, 1_000);
    assertThat(
            history
                .node(node, 0x11, 200, 1_000 + Bounds.BOUND_MS + 500)
                .nodes(0, 20_000)
                .violations("node outlived its owner"))
        .hasSize(1);

    HandMadeHistory inTime = twoWorkers().want(1, 100).idle(1, 1_000);
    assertThat(inTime.node(node, 0x11, 200, 1_050).nodes(0, 20_000).violations()).isEmpty();
  }

  @Test
  void aNodeLeftWhileTheServersWereDown_hasTheBoundFromTheirHeal() {
    String node = LOCK + "/_c_x-lock-0000000001";
    Findings findings =
        twoWorkers()
            .want(1, 100)
            .fault(FaultKind.FREEZE_SERVER, null, -1, 500, 6_000, 0)
            .idle(1, 1_000)
            .node(node, 0x11, 200, 6_000 + Bounds.BOUND_MS - 500)
            .nodes(0, 20_000);

    assertThat(findings.violations()).isEmpty();
  }

  @Test
  void aNodeFirstSeenGoneAfterAnOutage_isNotBlamed_forTheOutage() {
    String node = LOCK + "/_c_x-lock-0000000001";
    Findings findings =
        twoWorkers()
            .want(1, 100)
            .idle(1, 1_000)
            .fault(FaultKind.SERVER_RESTART, null, -1, 1_010, 9_000, 0)
            .node(node, 0x11, 200, 950, 9_100)
            .nodes(0, 20_000);

    assertThat(findings.violations()).isEmpty();
  }

  @Test
  void aNodeOfASessionItsWorkerLeftBehind_mustGoWithinTheBound() {
    String node = LOCK + "/_c_x-lock-0000000001";
    Findings findings =
        twoWorkers()
            .want(1, 100)
            .event(1, 1_000, "expired", "11")
            .session(1, 1_010, 0x12)
            .node(node, 0x11, 200, 1_000 + Bounds.BOUND_MS + 500)
            .nodes(0, 20_000);

    assertThat(findings.violations("node outlived its owner")).hasSize(1);
  }

  @Test
  void theDumpOfEphemeralNodes_isReadBySession() {
    String dump =
        "SessionTracker dump:\nSession Sets (1)/(1):\n0 expire at Thu Jan 01 00:00:00 UTC 1970:\n"
            + "\t0x1000001\nephemeral nodes dump:\nSessions with Ephemerals (2):\n"
            + "0x1000001:\n\t/pf/g/lock/_c_a-lock-0000000001\n\t/other/node\n"
            + "0x1000002:\n\t/pf/g/lock/_c_b-lock-0000000002\n";

    Map<String, Long> nodes = NodeWatcher.parse(dump, "/pf/");

    assertThat(nodes)
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "/pf/g/lock/_c_a-lock-0000000001", 0x1000001L,
                "/pf/g/lock/_c_b-lock-0000000002", 0x1000002L));
  }

  @Test
  void eventsAndSpecs_surviveTheirLineFormats() {
    Event error = Event.parse(3, "error 42 t1 java.lang.IllegalStateException: it broke here");
    assertThat(error.at()).isEqualTo(42);
    assertThat(error.fields())
        .containsExactly("t1", "java.lang.IllegalStateException: it broke here");

    WorkerSpec spec =
        Groups.multi("m", ClientVariant.BOTH).workerSpec(0, 7, "127.0.0.1:2181", 4242, 99, true);
    WorkerSpec back = WorkerSpec.decode(spec.encode().toArray(String[]::new));
    assertThat(back).isEqualTo(spec);
    assertThat(back.clientPath(back.realLockPath("lock-a"))).isEqualTo("/lock-a");
    assertThat(ClientVariant.CHROOT.clientPath("m", "/pf/m/lock")).isEqualTo("/m/lock");
    assertThat(ClientVariant.BOTH.connectString("h:1,h:2")).isEqualTo("h:1,h:2/pf");
  }

  @Test
  void thePageIsFilledBetweenItsMarkers_only() {
    String page = "intro\n" + FaultSuitePage.BEGIN + "\nold\n" + FaultSuitePage.END + "\nafter\n";

    String filled = FaultSuitePage.fill(page, "new figures\n");

    assertThat(filled).contains("intro", "new figures", "after").doesNotContain("old");
    assertThatThrownBy(() -> FaultSuitePage.fill("no markers", "x"))
        .isInstanceOf(IllegalStateException.class);
    assertThat(List.of(filled.split("\n"))).contains(FaultSuitePage.BEGIN, FaultSuitePage.END);
  }
}

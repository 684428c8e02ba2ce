package io.lockstep.faults;

import static io.lockstep.faults.ClientVariant.BOTH;
import static io.lockstep.faults.ClientVariant.CHROOT;
import static io.lockstep.faults.ClientVariant.NAMESPACE;
import static io.lockstep.faults.ClientVariant.PLAIN;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The runs of the long suite ({@code -Pprocess-faults}): every recipe and mode on one standalone
 * server for two thirds of the time, then three recipes on a three-server ensemble for the rest,
 * each under a seeded random sequence of every fault its servers allow, one at a time.
 */
final class LongRuns {
  private LongRuns() {}

  /** The two runs of a long suite of {@code total}, from {@code seed}, under {@code directory}. */
  static List<ProcessFaultRun.Config> configs(Duration total, long seed, Path directory) {
    Duration single = total.multipliedBy(2).dividedBy(3);
    List<GroupSpec> singleGroups =
        List.of(
            Groups.mutex("mutex", PLAIN, CHROOT, BOTH),
            Groups.localHandoff("handoff", NAMESPACE, CHROOT),
            Groups.linger("linger", NAMESPACE, BOTH),
            Groups.withBackoff(Groups.nonReentrant("nonreentrant", PLAIN, CHROOT)),
            Groups.readWrite("rw", CHROOT, PLAIN),
            Groups.multi("multi", CHROOT, NAMESPACE, BOTH),
            Groups.semaphore("sem", NAMESPACE, PLAIN),
            Groups.election("election", BOTH, PLAIN, CHROOT));
    List<FaultKind> singleKinds =
        List.of(
            FaultKind.FREEZE_HOLDER,
            FaultKind.FREEZE_WAITER,
            FaultKind.FREEZE_LINGERER,
            FaultKind.FREEZE_LEADER,
            FaultKind.KILL_HOLDER,
            FaultKind.CLIENT_EXPIRY,
            FaultKind.FREEZE_SERVER,
            FaultKind.SERVER_RESTART);
    List<GroupSpec> ensembleGroups =
        List.of(
            Groups.mutex("mutex", CHROOT, NAMESPACE, PLAIN),
            Groups.election("election", BOTH, PLAIN),
            Groups.semaphore("sem", CHROOT, NAMESPACE));
    List<FaultKind> ensembleKinds =
        List.of(
            FaultKind.FREEZE_ENSEMBLE_LEADER,
            FaultKind.FREEZE_SERVER,
            FaultKind.FREEZE_HOLDER,
            FaultKind.FREEZE_WAITER,
            FaultKind.FREEZE_LEADER,
            FaultKind.KILL_HOLDER,
            FaultKind.CLIENT_EXPIRY);
    return List.of(
        new ProcessFaultRun.Config(
            "long-single-server",
            seed,
            1,
            singleGroups,
            FaultSchedule.random(single, seed, singleKinds, singleGroups),
            true,
            directory.resolve("single-server")),
        new ProcessFaultRun.Config(
            "long-ensemble",
            seed + 1,
            3,
            ensembleGroups,
            FaultSchedule.random(total.minus(single), seed + 1, ensembleKinds, ensembleGroups),
            true,
            directory.resolve("ensemble")));
  }
}

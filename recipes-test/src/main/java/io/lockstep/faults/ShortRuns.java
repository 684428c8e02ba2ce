package io.lockstep.faults;

import static io.lockstep.faults.ClientVariant.BOTH;
import static io.lockstep.faults.ClientVariant.CHROOT;
import static io.lockstep.faults.ClientVariant.NAMESPACE;
import static io.lockstep.faults.ClientVariant.PLAIN;

import java.nio.file.Path;
import java.util.List;

/**
 * The runs of the short suite inside {@code mvn verify}: a subset of recipes and faults that covers
 * every fault kind once, each fault on a different recipe, every client variant, and every recipe
 * but one mode in each of the two runs.
 */
final class ShortRuns {
  private ShortRuns() {}

  /**
   * One standalone server; six groups (mutex, lingering mutex, read-write lock, election,
   * semaphore, multi-lock), clients of every variant. Three waves: the six process faults at once
   * (a holder, a waiter, a lingering process and the leader frozen past their sessions, a holder
   * killed, a holder's session expired on its client), then the server frozen past the sessions,
   * then the server killed and restarted a second later (back within the sessions).
   */
  static ProcessFaultRun.Config singleServer(long seed, Path directory) {
    List<GroupSpec> groups =
        List.of(
            Groups.mutex("mutex", PLAIN, CHROOT, BOTH),
            Groups.linger("linger", NAMESPACE, CHROOT),
            Groups.readWrite("rw", CHROOT, NAMESPACE),
            Groups.election("election", BOTH, PLAIN),
            Groups.semaphore("sem", NAMESPACE, BOTH),
            Groups.multi("multi", CHROOT, NAMESPACE));
    long freeze = Bounds.PAST_SESSION_MS;
    FaultSchedule schedule =
        FaultSchedule.waves(
            List.of(
                List.of(
                    new FaultStep(FaultKind.FREEZE_HOLDER, "mutex", freeze),
                    new FaultStep(FaultKind.FREEZE_WAITER, "rw", freeze),
                    new FaultStep(FaultKind.FREEZE_LINGERER, "linger", freeze),
                    new FaultStep(FaultKind.FREEZE_LEADER, "election", freeze),
                    new FaultStep(FaultKind.CLIENT_EXPIRY, "sem", 0),
                    new FaultStep(FaultKind.KILL_HOLDER, "multi", 0)),
                List.of(new FaultStep(FaultKind.FREEZE_SERVER, null, freeze)),
                List.of(new FaultStep(FaultKind.SERVER_RESTART, null, 1_000))));
    return new ProcessFaultRun.Config("single-server", seed, 1, groups, schedule, true, directory);
  }

  /**
   * Fencing off, to prove the checkers can fail: the store accepts every token and the holders
   * write to ZooKeeper without ownership checks. Two members of a mutex hold long (0.4 to 0.8 s,
   * writing every 50 ms); a holder is frozen past its session. Its first write after the thaw is
   * stale, and the checks must say so.
   */
  static ProcessFaultRun.Config fencingOff(long seed, Path directory) {
    Pacing longHolds = new Pacing(400, 800, 50, 5, 20, 100, 0, 0);
    GroupSpec mutex = Groups.mutex("unfenced", PLAIN, CHROOT);
    GroupSpec group =
        new GroupSpec(mutex.name(), mutex.role(), mutex.members(), longHolds, 0, 0, 0);
    FaultSchedule schedule =
        FaultSchedule.waves(
            List.of(
                List.of(
                    new FaultStep(FaultKind.FREEZE_HOLDER, group.name(), Bounds.PAST_SESSION_MS))));
    return new ProcessFaultRun.Config(
        "fencing-off", seed, 1, List.of(group), schedule, false, directory);
  }

  /**
   * A three-server ensemble; a non-reentrant mutex and a mutex with local handoff; the ensemble's
   * leader frozen past the sessions.
   */
  static ProcessFaultRun.Config ensemble(long seed, Path directory) {
    List<GroupSpec> groups =
        List.of(
            Groups.nonReentrant("nonreentrant", CHROOT, NAMESPACE),
            Groups.localHandoff("handoff", PLAIN, BOTH));
    FaultSchedule schedule =
        FaultSchedule.waves(
            List.of(
                List.of(
                    new FaultStep(
                        FaultKind.FREEZE_ENSEMBLE_LEADER, null, Bounds.PAST_SESSION_MS))));
    return new ProcessFaultRun.Config("ensemble", seed, 3, groups, schedule, true, directory);
  }
}

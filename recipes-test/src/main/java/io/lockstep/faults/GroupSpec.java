package io.lockstep.faults;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One group of a run: worker processes contending for one lock (or one semaphore, or one election)
 * with one recipe and mode, each member with its own client variant, threads and, for a multi-lock,
 * its own paths.
 *
 * @param name the group's name, its root {@code /pf/<name>} (and a namespace, so a valid node name)
 * @param role the recipe and mode
 * @param members the worker processes
 * @param pacing how the members' threads pace their loop
 * @param lingerMs the linger of a {@link RoleKind#LINGER} lock
 * @param handoffBound local handoffs in a row of a {@link RoleKind#LOCAL_HANDOFF} lock
 * @param leases the leases of a {@link RoleKind#SEMAPHORE}
 */
record GroupSpec(
    String name,
    RoleKind role,
    List<Member> members,
    Pacing pacing,
    int lingerMs,
    int handoffBound,
    int leases) {

  /**
   * One worker process of the group.
   *
   * @param variant how its client sees the tree
   * @param threads its contending threads
   * @param locks its lock names ({@code MODE:name} each for a multi-lock)
   * @param retryForever whether its client retries forever
   */
  record Member(ClientVariant variant, int threads, List<String> locks, boolean retryForever) {
    Member {
      locks = List.copyOf(locks);
    }
  }

  GroupSpec {
    members = List.copyOf(members);
  }

  /** The lock names of every member, without modes. */
  List<String> lockNames() {
    Set<String> names = new LinkedHashSet<>();
    for (Member member : members) {
      for (String lock : member.locks()) {
        names.add(lock.contains(":") ? lock.substring(lock.indexOf(':') + 1) : lock);
      }
    }
    return new ArrayList<>(names);
  }

  /** The real lock paths: the paths holds are recorded on. */
  List<String> lockPaths() {
    return lockNames().stream()
        .map(name -> ClientVariant.groupRoot(this.name) + "/" + name)
        .toList();
  }

  /** The real directories the participants' nodes go in. */
  List<String> directories() {
    if (role == RoleKind.SEMAPHORE) {
      String path = lockPaths().get(0);
      return List.of(path + "/leases", path + "/locks");
    }
    return lockPaths();
  }

  /** The data nodes the test process creates before the workers start (one per lock name). */
  List<String> dataNodes() {
    return lockNames().stream()
        .map(name -> ClientVariant.groupRoot(this.name) + "/data/" + name)
        .toList();
  }

  /** The lock paths counted rather than excluded, with their capacities (a semaphore's). */
  Map<String, Integer> capacities() {
    return role == RoleKind.SEMAPHORE ? Map.of(lockPaths().get(0), leases) : Map.of();
  }

  /** The spec of member {@code index} as worker number {@code worker}. */
  WorkerSpec workerSpec(
      int index, int worker, String servers, int hubPort, long seed, boolean fencing) {
    Member member = members.get(index);
    return new WorkerSpec(
        worker,
        name,
        role,
        member.variant(),
        member.threads(),
        servers,
        hubPort,
        seed,
        member.locks(),
        pacing,
        lingerMs,
        handoffBound,
        leases,
        member.retryForever(),
        fencing);
  }
}

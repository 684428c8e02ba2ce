package io.lockstep.faults;

import java.util.List;
import java.util.Map;

/**
 * What one run left for the checks: the workers' events in stamp order, the faults, the fenced
 * store's decisions, the lives of the nodes in the lock directories, who belongs to which group,
 * and when the run's workload began and ended. The checks read nothing else, so they can be tested
 * on histories made by hand.
 *
 * @param events every worker event, in stamp order
 * @param faults every fault injected
 * @param decisions the store's decisions, in commit order
 * @param nodes the lives of the ephemeral nodes under the run's root
 * @param workerGroups each worker's group
 * @param groups the groups, by name
 * @param start when every group had granted its lock once: liveness is measured from then (the
 *     JVMs' start is not)
 * @param end when the workload ended (the workers were told to quiesce)
 * @param deaths the workers the test process killed, with when
 */
record RunRecord(
    List<Event> events,
    List<FaultRecord> faults,
    List<StoreService.Decision> decisions,
    List<NodeWatcher.Life> nodes,
    Map<Integer, String> workerGroups,
    Map<String, GroupSpec> groups,
    long start,
    long end,
    Map<Integer, Long> deaths) {

  RunRecord {
    events = List.copyOf(events);
    faults = List.copyOf(faults);
    decisions = List.copyOf(decisions);
    nodes = List.copyOf(nodes);
    workerGroups = Map.copyOf(workerGroups);
    groups = Map.copyOf(groups);
    deaths = Map.copyOf(deaths);
  }

  /** The group of {@code worker}. */
  GroupSpec groupOf(int worker) {
    return groups.get(workerGroups.get(worker));
  }

  /** The group whose lock paths include {@code lockPath}, or null. */
  GroupSpec groupOfPath(String lockPath) {
    for (GroupSpec group : groups.values()) {
      if (group.lockPaths().contains(lockPath)) {
        return group;
      }
    }
    return null;
  }

  /** The capacity of {@code lockPath} (a semaphore's leases), or 0 for an excluding lock. */
  int capacity(String lockPath) {
    GroupSpec group = groupOfPath(lockPath);
    return group == null ? 0 : group.capacities().getOrDefault(lockPath, 0);
  }
}

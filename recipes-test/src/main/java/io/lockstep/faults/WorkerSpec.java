package io.lockstep.faults;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything a worker process is told on its command line: who it is, which lock it contends for
 * and how, how its client reaches the servers, and where the test process listens.
 *
 * @param worker the worker's number in the run
 * @param group the group (one lock, one recipe) the worker belongs to
 * @param role the recipe and mode
 * @param variant how its client sees the tree
 * @param threads contending threads in the process (for an election: 1)
 * @param servers the servers' connect string, without chroot
 * @param hubPort the test process's loopback port
 * @param seed the seed of the worker's random choices
 * @param locks the lock names under the group's root; for a multi-lock {@code MODE:name} each
 *     ({@code MUTEX:lock-a}, {@code WRITE:lock-b})
 * @param pacing holds, writes, rests and budgets
 * @param lingerMs the linger of a {@link RoleKind#LINGER} lock
 * @param handoffBound local handoffs in a row of a {@link RoleKind#LOCAL_HANDOFF} lock
 * @param leases the semaphore's leases
 * @param retryForever whether the client retries forever ({@code RetryForever}) rather than with a
 *     bounded exponential backoff
 * @param fencing whether writes go to ZooKeeper behind ownership checks; false only to prove the
 *     checkers can fail
 */
record WorkerSpec(
    int worker,
    String group,
    RoleKind role,
    ClientVariant variant,
    int threads,
    String servers,
    int hubPort,
    long seed,
    List<String> locks,
    Pacing pacing,
    int lingerMs,
    int handoffBound,
    int leases,
    boolean retryForever,
    boolean fencing) {

  WorkerSpec {
    locks = List.copyOf(locks);
  }

  /** The same worker under another number and seed (a replacement for a killed one). */
  WorkerSpec renumbered(int newWorker, long newSeed) {
    return new WorkerSpec(
        newWorker,
        group,
        role,
        variant,
        threads,
        servers,
        hubPort,
        newSeed,
        locks,
        pacing,
        lingerMs,
        handoffBound,
        leases,
        retryForever,
        fencing);
  }

  /** The real path of the lock named {@code name} ({@code /pf/<group>/<name>}). */
  String realLockPath(String name) {
    return ClientVariant.groupRoot(group) + "/" + name;
  }

  /** The real path of the data node written under the lock named {@code name}. */
  String realDataPath(String name) {
    return ClientVariant.groupRoot(group) + "/data/" + name;
  }

  /** A real path as this worker's client names it. */
  String clientPath(String real) {
    return variant.clientPath(group, real);
  }

  /** The command-line arguments that {@link #decode} reads back. */
  List<String> encode() {
    Map<String, String> values = new LinkedHashMap<>();
    values.put("worker", String.valueOf(worker));
    values.put("group", group);
    values.put("role", role.name());
    values.put("variant", variant.name());
    values.put("threads", String.valueOf(threads));
    values.put("servers", servers);
    values.put("hubPort", String.valueOf(hubPort));
    values.put("seed", String.valueOf(seed));
    values.put("locks", String.join(",", locks));
    values.put("pacing", pacing.encode());
    values.put("lingerMs", String.valueOf(lingerMs));
    values.put("handoffBound", String.valueOf(handoffBound));
    values.put("leases", String.valueOf(leases));
    values.put("retryForever", String.valueOf(retryForever));
    values.put("fencing", String.valueOf(fencing));
    List<String> args = new ArrayList<>();
    values.forEach((key, value) -> args.add(key + "=" + value));
    return args;
  }

  /**
   * Reads the arguments {@link #encode} wrote.
   *
   * @throws IllegalArgumentException if one is missing or malformed
   */
  static WorkerSpec decode(String[] args) {
    Map<String, String> values = new LinkedHashMap<>();
    for (String arg : args) {
      int equals = arg.indexOf('=');
      if (equals <= 0) {
        throw new IllegalArgumentException("not key=value: " + arg);
      }
      values.put(arg.substring(0, equals), arg.substring(equals + 1));
    }
    return new WorkerSpec(
        Integer.parseInt(required(values, "worker")),
        required(values, "group"),
        RoleKind.valueOf(required(values, "role")),
        ClientVariant.valueOf(required(values, "variant")),
        Integer.parseInt(required(values, "threads")),
        required(values, "servers"),
        Integer.parseInt(required(values, "hubPort")),
        Long.parseLong(required(values, "seed")),
        List.of(required(values, "locks").split(",")),
        Pacing.decode(required(values, "pacing")),
        Integer.parseInt(required(values, "lingerMs")),
        Integer.parseInt(required(values, "handoffBound")),
        Integer.parseInt(required(values, "leases")),
        Boolean.parseBoolean(required(values, "retryForever")),
        Boolean.parseBoolean(required(values, "fencing")));
  }

  private static String required(Map<String, String> values, String key) {
    String value = values.get(key);
    if (value == null) {
      throw new IllegalArgumentException("missing argument " + key);
    }
    return value;
  }
}

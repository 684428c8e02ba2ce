package io.lockstep.faults;

import java.util.ArrayList;
import java.util.List;

/**
 * The catalogue of groups the suite runs: every recipe and mode of the library, their members
 * mixing client variants (plain, chroot, namespace, both) on one lock. Every member's client
 * retries forever unless said otherwise.
 */
final class Groups {
  /**
   * Rests long beside the linger: a member that comes back while the other's place lingers (or is
   * held) is a sighting, and sightings in a row pause the linger, doubling each time (adaptive
   * linger), so with rests of 0.2 to 0.9 s two members soon stopped keeping their places at all and
   * the lingering process a fault aims at was often not there.
   */
  private static final Pacing LINGERING = new Pacing(20, 100, 80, 1_200, 2_500, 30, 1_000, 4_000);

  private static final Pacing TERMS = new Pacing(300, 1_200, 80, 0, 0, 0, 0, 0);
  private static final int LINGER_MS = 500;

  private Groups() {}

  /** {@code ReentrantMutex}, one thread per member. */
  static GroupSpec mutex(String name, ClientVariant... variants) {
    return simple(name, RoleKind.MUTEX, Pacing.DEFAULT, 1, "lock", variants);
  }

  /** {@code ReentrantMutex} with local handoff (at most 2 in a row), two threads per member. */
  static GroupSpec localHandoff(String name, ClientVariant... variants) {
    return simple(name, RoleKind.LOCAL_HANDOFF, Pacing.DEFAULT, 2, "lock", variants);
  }

  /**
   * {@code ReentrantMutex} that lingers {@value #LINGER_MS} ms, one thread per member: short holds
   * and long rests, so that a member often keeps its place while nobody else wants it.
   */
  static GroupSpec linger(String name, ClientVariant... variants) {
    return new GroupSpec(
        name, RoleKind.LINGER, members(1, "lock", variants), LINGERING, LINGER_MS, 0, 0);
  }

  /** {@code NonReentrantMutex}, one thread per member. */
  static GroupSpec nonReentrant(String name, ClientVariant... variants) {
    return simple(name, RoleKind.NON_REENTRANT, Pacing.DEFAULT, 1, "lock", variants);
  }

  /** {@code ReadWriteMutex}: each member one writer thread and one reader thread. */
  static GroupSpec readWrite(String name, ClientVariant... variants) {
    return simple(name, RoleKind.READ_WRITE, Pacing.DEFAULT, 2, "lock", variants);
  }

  /**
   * {@code MultiMutex}: three members over three paths, each member two of them ({@code lock-a}
   * always as the write side of a read-write lock, {@code lock-b} and {@code lock-c} as mutexes),
   * in differing orders.
   */
  static GroupSpec multi(String name, ClientVariant... variants) {
    List<List<String>> paths =
        List.of(
            List.of("WRITE:lock-a", "MUTEX:lock-b"),
            List.of("MUTEX:lock-c", "MUTEX:lock-b"),
            List.of("MUTEX:lock-c", "WRITE:lock-a"));
    List<GroupSpec.Member> members = new ArrayList<>();
    for (int i = 0; i < variants.length; i++) {
      members.add(new GroupSpec.Member(variants[i], 1, paths.get(i % paths.size()), true));
    }
    return new GroupSpec(name, RoleKind.MULTI, members, Pacing.DEFAULT, 0, 0, 0);
  }

  /** {@code CountingSemaphore} of two leases, two threads per member. */
  static GroupSpec semaphore(String name, ClientVariant... variants) {
    return new GroupSpec(
        name, RoleKind.SEMAPHORE, members(2, "sem", variants), Pacing.DEFAULT, 0, 0, 2);
  }

  /** {@code LeaderElection}, one participant per member, terms of 0.3 to 1.2 s. */
  static GroupSpec election(String name, ClientVariant... variants) {
    return new GroupSpec(name, RoleKind.ELECTION, members(1, "leader", variants), TERMS, 0, 0, 0);
  }

  /** The group with its members' clients retrying with a bounded backoff instead of forever. */
  static GroupSpec withBackoff(GroupSpec group) {
    List<GroupSpec.Member> members =
        group.members().stream()
            .map(m -> new GroupSpec.Member(m.variant(), m.threads(), m.locks(), false))
            .toList();
    return new GroupSpec(
        group.name(),
        group.role(),
        members,
        group.pacing(),
        group.lingerMs(),
        group.handoffBound(),
        group.leases());
  }

  private static GroupSpec simple(
      String name,
      RoleKind role,
      Pacing pacing,
      int threads,
      String lock,
      ClientVariant... variants) {
    return new GroupSpec(name, role, members(threads, lock, variants), pacing, 0, 2, 0);
  }

  private static List<GroupSpec.Member> members(
      int threads, String lock, ClientVariant... variants) {
    List<GroupSpec.Member> members = new ArrayList<>();
    for (ClientVariant variant : variants) {
      members.add(new GroupSpec.Member(variant, threads, List.of(lock), true));
    }
    return members;
  }
}

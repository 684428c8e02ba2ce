package io.lockstep.faults;

/**
 * How a worker's Curator client sees the tree: plainly, through a chroot in its connect string,
 * through a Curator namespace, or through both. Every variant reaches the same real nodes, so
 * participants of one lock may use different variants and must still exclude each other.
 *
 * <p>All of a run's nodes live under {@value #ROOT}; a group's under {@code /pf/<group>}. The
 * chroot is {@code /pf}; the namespace is {@code pf} alone, or the group's name under the chroot.
 */
enum ClientVariant {
  /** Connect string {@code host:port,...}, no namespace: paths are real paths. */
  PLAIN,
  /** Connect string {@code host:port,.../pf}: paths are relative to {@code /pf}. */
  CHROOT,
  /** Namespace {@code pf}: paths are relative to {@code /pf}. */
  NAMESPACE,
  /** Chroot {@code /pf} and namespace {@code <group>}: paths are relative to the group's root. */
  BOTH;

  /** Where every node of a run lives. */
  static final String ROOT = "/pf";

  /** The connect string of this variant to {@code servers}. */
  String connectString(String servers) {
    return this == CHROOT || this == BOTH ? servers + ROOT : servers;
  }

  /** The Curator namespace of this variant in {@code group}, or null for none. */
  String namespace(String group) {
    return switch (this) {
      case NAMESPACE -> ROOT.substring(1);
      case BOTH -> group;
      default -> null;
    };
  }

  /** The path a client of this variant in {@code group} uses for the real path {@code real}. */
  String clientPath(String group, String real) {
    String prefix =
        switch (this) {
          case PLAIN -> "";
          case CHROOT, NAMESPACE -> ROOT;
          case BOTH -> groupRoot(group);
        };
    if (!real.startsWith(prefix + "/")) {
      throw new IllegalArgumentException(real + " is not under " + prefix + " in " + this);
    }
    return real.substring(prefix.length());
  }

  /** The real path of {@code group}'s root: {@code /pf/<group>}. */
  static String groupRoot(String group) {
    return ROOT + "/" + group;
  }
}

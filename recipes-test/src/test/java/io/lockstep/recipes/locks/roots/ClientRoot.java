package io.lockstep.recipes.locks.roots;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;

/**
 * Where a client's paths start on the server: under a chroot in its connect string, under a Curator
 * namespace, under both, or under the namespace of a {@code usingNamespace} facade of a plain
 * client. What such a client calls {@code path} is {@link #serverPath(String, String)} for a client
 * with neither (the tests' root client).
 */
enum ClientRoot {
  /** {@code connectString + "/app"}. */
  CHROOT(true, false, false),
  /** {@code builder.namespace(ns)}. */
  NAMESPACE(false, true, false),
  /** {@code connectString + "/app"} and {@code builder.namespace(ns)}. */
  BOTH(true, true, false),
  /** {@code client.usingNamespace(ns)} of a plain client. */
  FACADE(false, true, true);

  /** The chroot of the roots that have one; a root client makes it before a client uses it. */
  static final String CHROOT_PATH = "/app";

  /** The namespace of the tests, where they do not choose one. */
  static final String NS = "ns";

  private final boolean chrooted;
  private final boolean namespaced;
  private final boolean facade;

  ClientRoot(boolean chrooted, boolean namespaced, boolean facade) {
    this.chrooted = chrooted;
    this.namespaced = namespaced;
    this.facade = facade;
  }

  /**
   * Gives a client's builder this root's chroot and namespace (not a facade's: see {@link #view}).
   */
  void configure(CuratorFrameworkFactory.Builder builder, String connectString, String ns) {
    builder.connectString(connectString + (chrooted ? CHROOT_PATH : ""));
    if (namespaced && !facade) {
      builder.namespace(ns);
    }
  }

  /** The client the tests use: {@code client} itself, or its facade in the namespace {@code ns}. */
  CuratorFramework view(CuratorFramework client, String ns) {
    return namespaced && facade ? client.usingNamespace(ns) : client;
  }

  /**
   * The server's path of what a client of this root in namespace {@link #NS} calls {@code path}.
   */
  String serverPath(String path) {
    return serverPath(NS, path);
  }

  /** The server's path of what a client of this root in namespace {@code ns} calls {@code path}. */
  String serverPath(String ns, String path) {
    String base = (chrooted ? CHROOT_PATH : "") + (namespaced ? "/" + ns : "");
    if (path.equals("/")) {
      return base.isEmpty() ? "/" : base;
    }
    return base + path;
  }
}

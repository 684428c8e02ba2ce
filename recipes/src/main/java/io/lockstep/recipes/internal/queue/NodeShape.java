package io.lockstep.recipes.internal.queue;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.ACL;

/**
 * How one client creates the nodes of a {@link Slot}: the ACL its {@code ACLProvider} gives and the
 * data (the slot's, else the client's default data, compressed if the client compresses), as
 * Curator's create builder resolves them. Resolved at a slot's first create and kept by the slot
 * ({@link Slot#shape()}), so that later creates ask no builder: a lock object enqueues in the same
 * slots every time. Neither the ACL nor the data is ever written to.
 */
public final class NodeShape {
  private final CuratorFramework client;
  private final List<ACL> acl;
  private final byte[] data;

  /**
   * @param client the client (or namespace facade) that resolved it
   * @param acl the ACL of the nodes
   * @param data the data of the nodes, given to ZooKeeper as it is
   */
  public NodeShape(CuratorFramework client, List<ACL> acl, byte[] data) {
    this.client = client;
    this.acl = acl; // as the ACLProvider gave it, as Curator's builder passes it on
    this.data = data;
  }

  /**
   * Whether {@code other} creates nodes the same way, for the same client: the ACL equal and the
   * data equal, so that slots can share one shape (a lock object per key). A null ACL (an
   * ACLProvider that gives none: the create fails, as Curator's does) equals only another null.
   */
  public boolean sameAs(NodeShape other) {
    return client == other.client
        && Objects.equals(acl, other.acl)
        && Arrays.equals(data, other.data);
  }

  /** Whether {@code other} is the client this shape was resolved for. */
  public boolean isFor(CuratorFramework other) {
    return client == other;
  }

  public List<ACL> acl() {
    return acl;
  }

  /** The data, shared: ZooKeeper's client only reads it. */
  public byte[] data() {
    return data;
  }
}

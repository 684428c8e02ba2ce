package io.lockstep.recipes.internal.queue;

import io.lockstep.recipes.locks.LockDriver;
import java.util.List;
import java.util.Objects;
import org.apache.zookeeper.CreateMode;

/**
 * One queue an acquisition enqueues in: the lock path, the driver that orders it, the node data,
 * and, for a read lock taken by the write holder (a downgrade), the write node it is tied to.
 */
public final class Slot {
  private final String path;
  private final LockDriver driver;
  private final byte[] data;
  private final String tiedSuffix;
  private final String tiedTo;
  private final String nodeNameEnd; // after the protection id: the lock name, and the tied suffix

  // How the lock's client creates our nodes, once a create resolved it (NodeCreates); null before.
  // Written at most once per client: a race resolves it twice, to the same.
  private volatile NodeShape shape;

  // The lock path as a one-path list, made at the first acquire (an idle lock object has none);
  // the same string list every time: a race makes two equal lists.
  private volatile List<String> paths;

  // This slot alone in a list: the queues of a lock in this queue only, shared by its holds and its
  // queue view.
  private final List<Slot> alone = List.of(this);

  private Slot(String path, LockDriver driver, byte[] data, String tiedSuffix, String tiedTo) {
    this.path = Objects.requireNonNull(path, "path");
    this.driver = Objects.requireNonNull(driver, "driver");
    this.data = data == null ? null : data.clone();
    this.tiedSuffix = tiedSuffix;
    this.tiedTo = tiedTo;
    String lockNameEnd = NodeNames.protectedNameEnd(driver.lockName()); // shared by every lock
    this.nodeNameEnd = tiedSuffix == null ? lockNameEnd : lockNameEnd + tiedSuffix;
  }

  /**
   * A sequential node in {@code path}'s queue.
   *
   * @param data the node data, or null for the client's default data
   */
  public static Slot of(String path, LockDriver driver, byte[] data) {
    return new Slot(path, driver, data, null, null);
  }

  /**
   * A non-sequential node whose name ends with {@code suffix}, so that it sorts exactly where the
   * node {@code tiedTo} carrying that suffix does: Curator's downgrade from a write lock to a read
   * lock. It is created only while {@code tiedTo} exists (a check in the same transaction).
   */
  public static Slot tiedTo(
      String path, LockDriver driver, byte[] data, String suffix, String tiedTo) {
    return new Slot(
        path,
        driver,
        data,
        Objects.requireNonNull(suffix, "suffix"),
        Objects.requireNonNull(tiedTo, "tiedTo"));
  }

  /** The lock path (the queue's parent node), as the client sees it. */
  public String path() {
    return path;
  }

  /** {@link #path()} alone in a list: the lock paths of an acquisition in this queue only. */
  public List<String> paths() {
    List<String> made = paths;
    if (made == null) {
      made = List.of(path);
      paths = made;
    }
    return made;
  }

  /** This slot alone in a list: the queues of an acquisition in this queue only. */
  public List<Slot> alone() {
    return alone;
  }

  /** The driver ordering this queue. */
  public LockDriver driver() {
    return driver;
  }

  /** The node data, or null for the client's default data. */
  public byte[] data() {
    return data == null ? null : data.clone();
  }

  /** The node this one is tied to (it must exist when ours is created), or null. */
  public String tiedTo() {
    return tiedTo;
  }

  /** The path to create: the protected name, and the tied suffix if any; one string per call. */
  public String nodePathToCreate(String protectionId) {
    return NodeNames.protectedPath(path, protectionId, nodeNameEnd);
  }

  /** How the lock's client creates our nodes, if a create resolved it already; else null. */
  public NodeShape shape() {
    return shape;
  }

  /** Keeps how the lock's client creates our nodes, for the creates to come. */
  public void shape(NodeShape resolved) {
    shape = resolved;
  }

  /** Sequential unless tied to another node's suffix. */
  public CreateMode createMode() {
    return tiedSuffix == null ? CreateMode.EPHEMERAL_SEQUENTIAL : CreateMode.EPHEMERAL;
  }
}

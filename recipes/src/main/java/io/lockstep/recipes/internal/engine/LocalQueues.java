package io.lockstep.recipes.internal.engine;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * This process's nodes in each single queue, per client: which acquisition owns a node, which local
 * node has the sequence number just before a new one, and how many local attempts are live in a
 * queue. With it a waiter behind a local node needs no read of the queue: two consecutive sequence
 * numbers have no node between them, and a local node that was granted was at the head. Paths are
 * ZooKeeper paths (namespace included), so namespace facades of one client share it.
 */
final class LocalQueues {
  /** A node of this process, and the acquisition it belongs to. */
  record LocalNode(String zkPath, Acquisition owner) {}

  private final ConcurrentMap<String, Acquisition> owners = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, LocalNode> bySequence = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, AtomicInteger> active = new ConcurrentHashMap<>();

  /** A local attempt in the queue of {@code lockZkPath} began. */
  void started(String lockZkPath) {
    active.computeIfAbsent(lockZkPath, p -> new AtomicInteger()).incrementAndGet();
  }

  /** A local attempt in that queue ended, or its hold was released. */
  void ended(String lockZkPath) {
    active.computeIfPresent(lockZkPath, (p, count) -> count.decrementAndGet() == 0 ? null : count);
  }

  /** Whether another local attempt than the caller's is live in that queue. */
  boolean othersActive(String lockZkPath) {
    AtomicInteger count = active.get(lockZkPath);
    return count != null && count.get() > 1;
  }

  /** Records our node, once created. */
  void note(String zkPath, Acquisition owner) {
    owners.put(zkPath, owner);
    String key = sequenceKey(zkPath, 0);
    if (key != null) {
      bySequence.put(key, new LocalNode(zkPath, owner));
    }
  }

  /** Forgets a node recorded by {@link #note}. */
  void forget(String zkPath, Acquisition owner) {
    owners.remove(zkPath, owner);
    String key = sequenceKey(zkPath, 0);
    if (key != null) {
      bySequence.remove(key, new LocalNode(zkPath, owner));
    }
  }

  /** The acquisition of this process that owns {@code zkPath}, or null. */
  Acquisition ownerOf(String zkPath) {
    return owners.get(zkPath);
  }

  /** The local node whose sequence number is one less than {@code zkPath}'s, or null. */
  LocalNode before(String zkPath) {
    String key = sequenceKey(zkPath, -1);
    return key == null ? null : bySequence.get(key);
  }

  /** Whether a node name ends with ZooKeeper's ten-digit sequence number. */
  static boolean isSequential(String name) {
    if (name.length() < 10) {
      return false;
    }
    for (int i = name.length() - 10; i < name.length(); i++) {
      if (name.charAt(i) < '0' || name.charAt(i) > '9') {
        return false;
      }
    }
    return true;
  }

  /** "parent#sequence" of the node, its sequence moved by {@code offset}; null if none. */
  private static String sequenceKey(String zkPath, int offset) {
    int length = zkPath.length();
    int slash = zkPath.lastIndexOf('/');
    if (length - slash - 1 < 10 || !isSequential(zkPath)) {
      return null; // the name is shorter than a sequence number, or does not end with one
    }
    long sequence = Long.parseLong(zkPath, length - 10, length, 10) + offset;
    if (sequence < 0) {
      return null;
    }
    String parent = slash == 0 ? "/" : zkPath.substring(0, slash);
    return parent + "#" + sequence;
  }
}

package io.lockstep.recipes.internal.engine;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * This process's nodes in each single queue, per client: which acquisition owns a node, which local
 * node has the sequence number just before a new one, and how many local attempts are live in a
 * queue. With it a waiter behind a local node needs no read of the queue: two consecutive sequence
 * numbers have no node between them, and a local node that was granted was at the head. Paths are
 * ZooKeeper paths (namespace included), so namespace facades of one client share it.
 *
 * <p>One lock guards every queue of the client: each call holds it for a few field writes, and a
 * queue nobody uses any more is dropped. An uncontended acquire and release costs one queue entry
 * and one node entry, and no key is made (a queue is named by its lock path, which the attempt
 * has).
 */
final class LocalQueues {
  /** A node of this process in a queue, and the acquisition it belongs to. */
  static final class LocalNode {
    private final String zkPath;
    private final long sequence; // ZooKeeper's sequence number in its name, or -1 if none
    private final Acquisition owner;
    private LocalNode next; // the queue's next local node; guarded by the LocalQueues' lock

    private LocalNode(String zkPath, Acquisition owner) {
      this.zkPath = zkPath;
      this.sequence = sequenceOf(zkPath);
      this.owner = owner;
    }

    String zkPath() {
      return zkPath;
    }

    Acquisition owner() {
      return owner;
    }
  }

  /** One queue: its live local attempts and its local nodes, guarded by the LocalQueues' lock. */
  private static final class Queue {
    int active; // local attempts live in the queue
    LocalNode nodes; // its local nodes, the latest first
  }

  private final ReentrantLock lock = new ReentrantLock();

  @GuardedBy("lock")
  private final Map<String, Queue> queues = new HashMap<>(); // by the lock path; none empty

  @GuardedBy("lock")
  private Queue spare; // the last queue dropped, empty: the next queue made is this one

  /** A local attempt in the queue of {@code lockZkPath} began. */
  void started(String lockZkPath) {
    lock.lock();
    try {
      queue(lockZkPath).active++;
    } finally {
      lock.unlock();
    }
  }

  /** A local attempt in that queue ended, or its hold was released. */
  void ended(String lockZkPath) {
    lock.lock();
    try {
      Queue queue = queues.get(lockZkPath);
      if (queue != null) {
        queue.active--;
        dropIfUnused(lockZkPath, queue);
      }
    } finally {
      lock.unlock();
    }
  }

  /** Whether another local attempt than the caller's is live in that queue. */
  boolean othersActive(String lockZkPath) {
    lock.lock();
    try {
      Queue queue = queues.get(lockZkPath);
      return queue != null && queue.active > 1;
    } finally {
      lock.unlock();
    }
  }

  /** Records our node {@code zkPath} in the queue of {@code lockZkPath}, once created. */
  void note(String lockZkPath, String zkPath, Acquisition owner) {
    LocalNode node = new LocalNode(zkPath, owner);
    lock.lock();
    try {
      Queue queue = queue(lockZkPath);
      node.next = queue.nodes;
      queue.nodes = node;
    } finally {
      lock.unlock();
    }
  }

  /** Forgets a node recorded by {@link #note}. */
  void forget(String lockZkPath, String zkPath, Acquisition owner) {
    lock.lock();
    try {
      Queue queue = queues.get(lockZkPath);
      if (queue == null) {
        return;
      }
      LocalNode previous = null;
      for (LocalNode node = queue.nodes; node != null; node = node.next) {
        if (node.owner == owner && node.zkPath.equals(zkPath)) {
          if (previous == null) {
            queue.nodes = node.next;
          } else {
            previous.next = node.next;
          }
          break;
        }
        previous = node;
      }
      dropIfUnused(lockZkPath, queue);
    } finally {
      lock.unlock();
    }
  }

  /** The acquisition of this process that owns {@code zkPath}, or null. */
  Acquisition ownerOf(String zkPath) {
    int slash = zkPath.lastIndexOf('/');
    String lockZkPath = slash <= 0 ? "/" : zkPath.substring(0, slash);
    lock.lock();
    try {
      Queue queue = queues.get(lockZkPath);
      for (LocalNode node = queue == null ? null : queue.nodes; node != null; node = node.next) {
        if (node.zkPath.equals(zkPath)) {
          return node.owner;
        }
      }
      return null;
    } finally {
      lock.unlock();
    }
  }

  /**
   * The local node in the queue of {@code lockZkPath} whose sequence number is one less than that
   * of {@code zkPath}, or null.
   */
  LocalNode before(String lockZkPath, String zkPath) {
    long sequence = sequenceOf(zkPath);
    if (sequence <= 0) {
      return null;
    }
    lock.lock();
    try {
      Queue queue = queues.get(lockZkPath);
      for (LocalNode node = queue == null ? null : queue.nodes; node != null; node = node.next) {
        if (node.sequence == sequence - 1) {
          return node;
        }
      }
      return null;
    } finally {
      lock.unlock();
    }
  }

  /** The queue of {@code lockZkPath}, made (or the spare reused) if it has none. */
  @GuardedBy("lock")
  private Queue queue(String lockZkPath) {
    Queue queue = queues.get(lockZkPath);
    if (queue == null) {
      queue = spare != null ? spare : new Queue();
      spare = null;
      queues.put(lockZkPath, queue);
    }
    return queue;
  }

  @GuardedBy("lock")
  private void dropIfUnused(String lockZkPath, Queue queue) {
    if (queue.active <= 0 && queue.nodes == null) {
      queues.remove(lockZkPath);
      queue.active = 0;
      spare = queue; // a lock taken and released in a loop makes one queue, not one a cycle
    }
  }

  /** ZooKeeper's ten-digit sequence number at the end of a node's path, or -1 if there is none. */
  private static long sequenceOf(String zkPath) {
    int length = zkPath.length();
    if (length - zkPath.lastIndexOf('/') - 1 < 10) {
      return -1; // the name is shorter than a sequence number
    }
    for (int i = length - 10; i < length; i++) {
      if (zkPath.charAt(i) < '0' || zkPath.charAt(i) > '9') {
        return -1;
      }
    }
    return Long.parseLong(zkPath, length - 10, length, 10);
  }
}

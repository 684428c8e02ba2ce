package io.lockstep.recipes.locks;

import io.lockstep.recipes.internal.queue.MutexDriver;
import io.lockstep.recipes.internal.queue.QueueOrder;
import java.util.List;

/**
 * The ordering policy of a lock queue: what our node is called, how the queue is sorted, and
 * whether our node holds the lock or which node it must watch.
 *
 * <p>Every participant creates an ephemeral node under the lock path named {@code
 * _c_<uuid>-<lockName><sequence>}. After each reading of the children, the engine sorts them by
 * {@link #sortKey(String)} (ties broken by the full name) and asks {@link #decide(List, String)}
 * whether our node holds the lock. If not, the engine watches the returned node with {@code
 * getData} and reads the queue again when it changes. The engine owns everything else: creating and
 * recovering nodes, retries, watches, timeouts, cancellation and loss.
 *
 * <p>The built-in {@link #mutex()} driver reproduces Curator's {@code InterProcessMutex} order
 * exactly, so Lockstep and Curator clients on one path exclude each other. A user-written driver
 * orders differently (by a priority encoded in the lock name, say); all participants of one queue
 * must then use drivers that agree on the order.
 *
 * <p>Implementations must be immutable, thread-safe and quick: they are called on ZooKeeper's event
 * thread. A waiter must be told to watch a node whose deletion or change may let it hold; a node it
 * watches that does not move leaves it waiting. A driver that throws, or names a node that is not
 * another child, fails the acquire with {@link LockException}.
 */
public interface LockDriver {
  /**
   * The name our node carries between the protection prefix and the sequence number, for example
   * {@code "lock-"}. It must be non-empty and must not contain {@code '/'}.
   *
   * @return the lock name
   */
  String lockName();

  /**
   * The key a child of the lock path sorts by. The default is Curator's order: the sequence number
   * after {@link #lockName()}. A name that ends with the lock name and ZooKeeper's ten-digit
   * sequence number sorts by that number, whatever digits the lock name holds; any other name sorts
   * by the text after the last occurrence of the lock name, or by the whole name when it does not
   * occur (Curator's rule, which alone would cut an all-digit lock name such as {@code "7"} inside
   * the sequence number).
   *
   * @param nodeName the name (not the path) of a child of the lock path
   * @return the key to sort by, compared as a string
   */
  default String sortKey(String nodeName) {
    return nodeName.substring(QueueOrder.keyStart(nodeName, lockName()));
  }

  /**
   * Decides whether our node holds the lock. Called with the children sorted by {@link
   * #sortKey(String)}; our node is always among them.
   *
   * @param sortedNodeNames the children of the lock path, in queue order
   * @param ourNodeName the name of our node
   * @return {@link LockDecision#hold()}, or {@link LockDecision#watch(String)} naming another child
   */
  LockDecision decide(List<String> sortedNodeNames, String ourNodeName);

  /**
   * Whether a node created after ours always sorts after ours. When true, a waiter whose watched
   * node was at the head of the queue takes the lock as soon as that node is deleted, without
   * reading the children again: the handoff then costs one small request instead of a read of the
   * whole queue. Return true only when the order guarantees it and the first node of the queue
   * always holds; the default is false.
   *
   * @return true if new nodes always sort last
   */
  default boolean newNodesSortLast() {
    return false;
  }

  /**
   * The mutex order of Curator's {@code InterProcessMutex}: nodes named {@code lock-}, sorted by
   * sequence number; the first holds, every other watches its immediate predecessor.
   *
   * @return the built-in mutex driver
   */
  static LockDriver mutex() {
    return MutexDriver.INSTANCE;
  }
}

package io.lockstep.recipes.boot;

import io.lockstep.recipes.locks.LockInspector;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.PathUtils;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code locks} Actuator endpoint: the holders and waiters of every lock under the configured
 * roots, read through a {@link LockInspector} (Lockstep's and Curator's lock nodes alike: mutex,
 * read-write, semaphore and leader election queues). A lock is a path whose children include lock
 * nodes; its sub-paths are listed too, so a registry key {@code "orders/17"} shows as the lock
 * {@code <root>/orders/17}.
 *
 * <p>Each read walks the roots afresh: a few ZooKeeper reads per path (never a write or a watch),
 * at most {@code maxPaths} paths per root, beyond which the root's listing says {@code truncated}.
 * What it shows is a snapshot: the queues may have moved on by the time it is read. When ZooKeeper
 * cannot be read, a root's listing carries the error and the locks read before it. Fencing tokens
 * are not shown: a hold's token is known to its holder ({@code fencingToken()}), not readable from
 * its node.
 */
@Endpoint(id = "locks")
public final class LocksEndpoint {
  private final CuratorFramework client;
  private final List<String> roots;
  private final int maxPaths;

  /**
   * Creates the endpoint.
   *
   * @param client the Curator client to read through (its namespace applies)
   * @param roots the paths under which to list the locks
   * @param maxPaths how many paths to read at most under each root
   * @throws NullPointerException if {@code client}, {@code roots} or a root is null
   * @throws IllegalArgumentException if a root is not a valid absolute ZooKeeper path, or {@code
   *     maxPaths} is not positive
   */
  public LocksEndpoint(CuratorFramework client, List<String> roots, int maxPaths) {
    this.client = Objects.requireNonNull(client, "client");
    this.roots = List.copyOf(Objects.requireNonNull(roots, "roots"));
    for (String root : this.roots) {
      try {
        PathUtils.validatePath(root);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "roots: not a valid ZooKeeper path: '" + root + "': " + e.getMessage(), e);
      }
    }
    if (maxPaths <= 0) {
      throw new IllegalArgumentException("maxPaths must be positive: " + maxPaths);
    }
    this.maxPaths = maxPaths;
  }

  /**
   * The locks under each root, with their holders and waiters.
   *
   * @return the listing, one entry per root in the configured order
   */
  @ReadOperation
  public LocksReport locks() {
    LockInspector inspector = new LockInspector(client);
    List<RootReport> reports = new ArrayList<>();
    for (String root : roots) {
      reports.add(new LockWalk(inspector, maxPaths).walk(root));
    }
    return new LocksReport(reports);
  }

  /**
   * The endpoint's answer.
   *
   * @param roots the listing of each root
   */
  public record LocksReport(List<RootReport> roots) {
    /**
     * Copies the list.
     *
     * @param roots the listing of each root
     */
    public LocksReport {
      roots = List.copyOf(roots);
    }
  }

  /**
   * The locks under one root.
   *
   * @param root the root
   * @param locks the locks found, in path order (depth first)
   * @param truncated whether paths were left unread ({@code maxPaths} reached)
   * @param error why the listing stopped early (ZooKeeper could not be read), or null
   */
  public record RootReport(String root, List<LockReport> locks, boolean truncated, String error) {
    /**
     * Copies the list.
     *
     * @param root the root
     * @param locks the locks found
     * @param truncated whether paths were left unread
     * @param error why the listing stopped early, or null
     */
    public RootReport {
      Objects.requireNonNull(root, "root");
      locks = List.copyOf(locks);
    }
  }

  /**
   * One lock.
   *
   * @param path the lock path
   * @param holders the nodes that hold it, in queue order
   * @param waiters the nodes that wait for it, in queue order
   */
  public record LockReport(String path, List<NodeReport> holders, List<NodeReport> waiters) {
    /**
     * Copies the lists.
     *
     * @param path the lock path
     * @param holders the holders
     * @param waiters the waiters
     */
    public LockReport {
      Objects.requireNonNull(path, "path");
      holders = List.copyOf(holders);
      waiters = List.copyOf(waiters);
    }
  }

  /**
   * One node of a lock's queue.
   *
   * @param node the node's full path
   * @param mode how it takes part: {@code MUTEX}, {@code READ}, {@code WRITE}, {@code LEASE},
   *     {@code LATCH} ({@link LockInspector.Mode})
   * @param sessionId the owning ZooKeeper session in hexadecimal ({@code 0x...}), as ZooKeeper logs
   *     it
   * @param ageMillis how long ago the node was created, in milliseconds (this machine's clock
   *     against the server's)
   */
  public record NodeReport(String node, String mode, String sessionId, long ageMillis) {
    /**
     * Checks the components.
     *
     * @param node the node's full path
     * @param mode how it takes part
     * @param sessionId the owning session
     * @param ageMillis the node's age
     */
    public NodeReport {
      Objects.requireNonNull(node, "node");
      Objects.requireNonNull(mode, "mode");
      Objects.requireNonNull(sessionId, "sessionId");
    }
  }
}

package io.lockstep.recipes.internal.zk;

import io.lockstep.recipes.internal.queue.NodeNames;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException.Code;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every way the engine deletes its nodes: through Curator's guaranteed delete, which keeps retrying
 * in the background until it succeeds; in the caller's thread for a release, as Curator's own
 * release does; and by protection id, for a create whose outcome is unknown. A closed client sends
 * nothing: its session, and our nodes, ended with it.
 */
public final class NodeDeletes {
  private static final Logger log = LoggerFactory.getLogger(NodeDeletes.class);

  /** The longest pause between two sweeps of a client that cannot reach ZooKeeper. */
  private static final long MAX_SWEEP_PAUSE_MILLIS = 5_000;

  private final ZkRequests zk;

  public NodeDeletes(ZkRequests zk) {
    this.zk = zk;
  }

  /**
   * Deletes our nodes: one guaranteed delete for one node, one {@code multi} of deletes for
   * several, falling back to a guaranteed delete per node if the transaction fails (one of them
   * already gone, say). Completes when ZooKeeper confirmed, or when the deletion was handed to
   * Curator's background retries.
   */
  public CompletableFuture<Void> deleteGuaranteed(List<String> nodePaths) {
    if (nodePaths.isEmpty() || !zk.isStarted()) {
      return CompletableFuture.completedFuture(null);
    }
    if (nodePaths.size() == 1) {
      return deleteOneGuaranteed(nodePaths.get(0));
    }
    CompletableFuture<Void> result = new CompletableFuture<>();
    try {
      zk.raw()
          .transaction()
          .inBackground(
              (c, event) -> {
                if (event.getResultCode() == Code.OK.intValue()) {
                  result.complete(null);
                } else {
                  Callbacks.when(deleteEachGuaranteed(nodePaths), (v, e) -> result.complete(null));
                }
              })
          .forOperations(deleteOps(nodePaths));
    } catch (Exception e) {
      log.debug("Multi-delete of {} could not start; deleting one by one", nodePaths, e);
      Callbacks.when(deleteEachGuaranteed(nodePaths), (v, f) -> result.complete(null));
    }
    return result;
  }

  /**
   * Deletes our nodes in the calling thread: one guaranteed delete for one node, one transaction
   * for several (falling back to a guaranteed delete per node). A delete that cannot reach
   * ZooKeeper is handed to Curator's background retries; an interrupt is kept for the caller.
   */
  void deleteNow(List<String> nodePaths) {
    if (nodePaths.isEmpty() || !zk.isStarted()) {
      return;
    }
    if (nodePaths.size() > 1) {
      try {
        zk.raw().transaction().forOperations(deleteOps(nodePaths));
        return;
      } catch (Exception e) {
        keepInterrupt(e);
        log.debug("Multi-delete of {} failed ({}); deleting one by one", nodePaths, e.toString());
      }
    }
    for (String path : nodePaths) {
      try {
        zk.raw().delete().quietly().guaranteed().forPath(zk.toZk(path));
      } catch (Exception e) {
        keepInterrupt(e);
        if (zk.isStarted()) {
          log.warn(
              "Deleting lock node {} failed ({}); Curator retries it in the background",
              path,
              e.toString());
        }
      }
    }
  }

  /**
   * Finds the nodes carrying {@code protectionId} in {@code lockPaths} and deletes them: the
   * cleanup of a create whose answer was lost. Tries again, with growing pauses, until the queues
   * could be read once (a node of an expired session is gone by then anyway) or the client closes.
   * Completes after the first try, successful or not, so that a caller can wait a bounded time.
   */
  public CompletableFuture<Void> sweep(List<String> lockPaths, String protectionId) {
    CompletableFuture<Void> firstTry = new CompletableFuture<>();
    sweep(lockPaths, protectionId, 0, firstTry);
    return firstTry;
  }

  private void sweep(
      List<String> lockPaths, String protectionId, int round, CompletableFuture<Void> firstTry) {
    if (!zk.isStarted()) {
      firstTry.complete(null);
      return;
    }
    String prefix = NodeNames.prefix(protectionId);
    Callbacks.when(
        zk.children(lockPaths, null),
        (children, failure) -> {
          if (failure != null) {
            // again after a pause, or as soon as the client is connected again if sooner
            long pause = Math.min(MAX_SWEEP_PAUSE_MILLIS, 250L << Math.min(round, 5));
            zk.later(pause, () -> sweep(lockPaths, protectionId, round + 1, firstTry));
            firstTry.complete(null);
            return;
          }
          List<String> found = NodeNames.withPrefix(lockPaths, children.lists(), prefix, false);
          if (!found.isEmpty()) {
            log.info("Deleting {}, left by a create whose answer was lost", found);
          }
          Callbacks.when(deleteGuaranteed(found), (v, f) -> firstTry.complete(null));
        });
  }

  private List<CuratorOp> deleteOps(List<String> nodePaths) throws Exception {
    List<CuratorOp> deletes = new ArrayList<>(nodePaths.size());
    for (String path : nodePaths) {
      deletes.add(zk.raw().transactionOp().delete().forPath(zk.toZk(path)));
    }
    return deletes;
  }

  private CompletableFuture<Void> deleteEachGuaranteed(List<String> nodePaths) {
    CompletableFuture<Void> all = new CompletableFuture<>();
    AtomicInteger pending = new AtomicInteger(nodePaths.size());
    for (String path : nodePaths) {
      Callbacks.when(
          deleteOneGuaranteed(path),
          (v, e) -> {
            if (pending.decrementAndGet() == 0) {
              all.complete(null);
            }
          });
    }
    return all;
  }

  private CompletableFuture<Void> deleteOneGuaranteed(String path) {
    CompletableFuture<Void> result = new CompletableFuture<>();
    BackgroundCallback callback =
        (c, event) -> {
          logDeleteOutcome(path, event);
          result.complete(null);
        };
    try {
      zk.raw().delete().guaranteed().inBackground(callback).forPath(zk.toZk(path));
    } catch (Exception e) {
      // Only a closed client refuses to start a delete; its session, and our node, end with it.
      log.debug("Could not delete {}: {}", path, e.toString());
      result.complete(null);
    }
    return result;
  }

  private static void logDeleteOutcome(String path, CuratorEvent event) {
    int rc = event.getResultCode();
    if (rc != Code.OK.intValue() && rc != Code.NONODE.intValue()) {
      log.warn(
          "Deleting lock node {} failed with {}; Curator retries it in the background",
          path,
          Code.get(rc));
    }
  }

  private static void keepInterrupt(Exception e) {
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
  }
}

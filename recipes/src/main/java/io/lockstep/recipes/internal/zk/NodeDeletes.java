package io.lockstep.recipes.internal.zk;

import io.lockstep.recipes.internal.queue.NodeNames;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every way the engine deletes its nodes: guaranteed, that is with one plain delete (or one {@code
 * multi}) first and, if that fails, Curator's guaranteed delete, which keeps retrying in the
 * background, across reconnects, until it succeeds; and by protection id, for a create whose
 * outcome is unknown. A closed client sends nothing: its session, and our nodes, ended with it.
 */
public final class NodeDeletes {
  private static final Logger log = LoggerFactory.getLogger(NodeDeletes.class);

  /** The longest pause between two sweeps of a client that cannot reach ZooKeeper. */
  private static final long MAX_SWEEP_PAUSE_MILLIS = 5_000;

  private final ZkRequests zk;

  /** The answer of a plain delete (its context: the future to complete). One for every delete. */
  private final AsyncCallback.VoidCallback deleted = this::deleted;

  public NodeDeletes(ZkRequests zk) {
    this.zk = zk;
  }

  /**
   * Deletes our nodes: one plain delete for one node, one {@code multi} of deletes for several,
   * falling back to a delete per node if the transaction fails (one of them already gone, say),
   * each handed to Curator's guaranteed delete if it fails (see {@link #deleteOne}). Completes when
   * ZooKeeper confirmed, or when the deletion was handed to Curator's background retries.
   */
  public CompletableFuture<Void> deleteGuaranteed(List<String> nodePaths) {
    CompletableFuture<Void> result = new CompletableFuture<>();
    deleteGuaranteed(nodePaths, result);
    return result;
  }

  /**
   * As {@link #deleteGuaranteed(List)}, completing {@code done}. The deletion is answered at the
   * latest when the connection drops (ZooKeeper's client fails the requests in flight with {@code
   * CONNECTIONLOSS}), and then handed to Curator's background retries: a caller that waits for
   * {@code done} while the client is connected stops waiting when the connection drops.
   */
  public void deleteGuaranteed(List<String> nodePaths, CompletableFuture<Void> done) {
    if (nodePaths.isEmpty() || !zk.isStarted()) {
      done.complete(null);
      return;
    }
    if (nodePaths.size() == 1) {
      deleteOne(nodePaths.get(0), done);
      return;
    }
    List<Op> deletes = new ArrayList<>(nodePaths.size());
    for (String path : nodePaths) {
      deletes.add(Op.delete(zk.toZk(path), -1));
    }
    try {
      zk.handle()
          .multi(
              deletes,
              (rc, path, ctx, results) -> {
                if (rc == Code.OK.intValue()) {
                  done.complete(null);
                } else if (isConnectionFailure(rc)) {
                  handOverAll(nodePaths, done); // one by one now would wait for a connection
                } else {
                  Callbacks.when(deleteEachGuaranteed(nodePaths), (v, f) -> done.complete(null));
                }
              },
              null);
    } catch (KeeperException | RuntimeException e) {
      log.debug("Multi-delete of {} could not be sent ({}); Curator retries", nodePaths, e);
      handOverAll(nodePaths, done);
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
    deleteOne(path, result);
    return result;
  }

  /**
   * One plain delete of {@code path} on the current handle, any version, as Curator's guaranteed
   * delete sends first, without the builder, its retry loop and its background event: the node
   * almost always goes at once. If it fails (gone already is fine), the delete goes to Curator's
   * guaranteed delete ({@link #handOver}), which retries it until it succeeds.
   */
  private void deleteOne(String path, CompletableFuture<Void> done) {
    String zkPath = zk.toZk(path);
    try {
      zk.handle().delete(zkPath, -1, deleted, done);
    } catch (KeeperException | RuntimeException e) {
      log.debug("Could not send the delete of {} ({}); Curator retries it", path, e.toString());
      handOver(zkPath);
      done.complete(null);
    }
  }

  /** Hands each node's delete to Curator's guaranteed delete, then completes {@code done}. */
  private void handOverAll(List<String> nodePaths, CompletableFuture<Void> done) {
    for (String path : nodePaths) {
      handOver(zk.toZk(path));
    }
    done.complete(null);
  }

  /** Whether a request failed with the connection or the session, not on the node. */
  private static boolean isConnectionFailure(int rc) {
    return rc == Code.CONNECTIONLOSS.intValue()
        || rc == Code.OPERATIONTIMEOUT.intValue()
        || rc == Code.SESSIONEXPIRED.intValue()
        || rc == Code.SESSIONMOVED.intValue();
  }

  /** A plain delete was answered: done, or handed over to Curator's guaranteed delete. */
  @SuppressWarnings("unchecked") // the context of every plain delete is its future
  private void deleted(int rc, String zkPath, Object context) {
    if (rc != Code.OK.intValue() && rc != Code.NONODE.intValue()) {
      log.debug("Deleting lock node {} failed with {}; Curator retries it", zkPath, Code.get(rc));
      handOver(zkPath);
    }
    ((CompletableFuture<Void>) context).complete(null);
  }

  /**
   * Hands the delete of {@code zkPath} to Curator's guaranteed delete, in the background: retried
   * as the client's policy allows, and again at each reconnection, until it succeeds.
   */
  private void handOver(String zkPath) {
    String path = zk.toClient(zkPath);
    try {
      zk.raw()
          .delete()
          .guaranteed()
          .inBackground((c, event) -> logDeleteOutcome(path, event))
          .forPath(zkPath);
    } catch (Exception e) {
      // Only a closed client refuses to start a delete; its session, and our node, end with it.
      log.debug("Could not delete {}: {}", path, e.toString());
    }
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
}

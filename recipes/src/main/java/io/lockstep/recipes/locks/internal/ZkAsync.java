package io.lockstep.recipes.locks.internal;

import io.lockstep.recipes.locks.LockException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.CreateOptions;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.proto.CreateRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's ZooKeeper calls, all asynchronous, all in one place.
 *
 * <p>Creates and reads go to the raw {@link ZooKeeper} handle: a create of a sequential node must
 * never be blindly retried (a retry after a lost answer would leave a second node behind), so the
 * engine recovers it itself; and reads of several queues go in one read-only {@code multi}, which
 * Curator's API does not offer. Paths are kept as the client sees them and translated to and from
 * the client's namespace here. ACLs and default data come from Curator's own create builder, so the
 * client's {@code ACLProvider} and default data apply exactly as for Curator's recipes. Deletes go
 * through Curator's guaranteed delete, which keeps retrying in the background until it succeeds.
 */
final class ZkAsync {
  private static final Logger log = LoggerFactory.getLogger(ZkAsync.class);

  private final CuratorFramework client;

  /** The outcome of enqueuing: our node in each queue, the creating zxid, the owning session. */
  record Created(List<String> nodePaths, long czxid, long sessionId) {}

  /** A node's data and stat. */
  record NodeData(byte[] data, Stat stat) {}

  ZkAsync(CuratorFramework client) {
    this.client = Objects.requireNonNull(client, "client");
  }

  CuratorFramework client() {
    return client;
  }

  /** The current session id, or 0 when there is no usable handle. */
  long currentSessionId() {
    try {
      return handle().getSessionId();
    } catch (KeeperException | RuntimeException e) {
      return 0;
    }
  }

  /**
   * Creates our node in every slot's queue: one create (which returns the node's stat) for one
   * slot, one {@code multi} of creates for several. Not retried: on connection loss the caller
   * finds out whether the create happened.
   */
  CompletableFuture<Created> create(List<Slot> slots, String protectionId) {
    CompletableFuture<Created> result = new CompletableFuture<>();
    try {
      ZooKeeper zk = handle();
      long session = zk.getSessionId();
      List<CreateRequest> requests = new ArrayList<>(slots.size());
      for (Slot slot : slots) {
        requests.add(resolveCreate(slot, protectionId));
      }
      if (slots.size() == 1) {
        CreateRequest request = requests.get(0);
        zk.create(
            request.getPath(),
            request.getData(),
            request.getAcl(),
            slots.get(0).createMode(),
            (rc, path, ctx, name, stat) -> {
              if (rc == Code.OK.intValue()) {
                result.complete(new Created(List.of(toClient(name)), stat.getCzxid(), session));
              } else {
                result.completeExceptionally(KeeperException.create(Code.get(rc), toClient(path)));
              }
            },
            null);
      } else {
        List<Op> ops = new ArrayList<>(slots.size());
        for (int i = 0; i < slots.size(); i++) {
          CreateRequest request = requests.get(i);
          CreateMode mode = slots.get(i).createMode();
          ops.add(
              Op.create(
                  request.getPath(),
                  request.getData(),
                  CreateOptions.newBuilder(request.getAcl(), mode).build()));
        }
        zk.multi(
            ops,
            (rc, path, ctx, results) -> {
              if (rc == Code.OK.intValue()) {
                result.complete(created(results, session));
              } else {
                result.completeExceptionally(multiFailure(rc, ops, results));
              }
            },
            null);
      }
    } catch (KeeperException | RuntimeException e) {
      result.completeExceptionally(e);
    }
    return result;
  }

  /**
   * Reads the children of each path (retried as the client's policy allows): a plain {@code
   * getChildren} for one path, optionally leaving a child watch, or one read-only {@code multi} for
   * several. A path that does not exist has no children.
   */
  CompletableFuture<List<List<String>>> children(List<String> paths, Watcher childWatcher) {
    return retrying(() -> childrenOnce(paths, childWatcher));
  }

  private CompletableFuture<List<List<String>>> childrenOnce(
      List<String> paths, Watcher childWatcher) {
    CompletableFuture<List<List<String>>> result = new CompletableFuture<>();
    try {
      ZooKeeper zk = handle();
      if (paths.size() == 1) {
        String path = paths.get(0);
        zk.getChildren(
            toZk(path),
            childWatcher,
            (rc, p, ctx, children) -> {
              if (rc == Code.OK.intValue()) {
                result.complete(List.of(children));
              } else if (rc == Code.NONODE.intValue()) {
                result.complete(List.of(List.of()));
              } else {
                result.completeExceptionally(KeeperException.create(Code.get(rc), path));
              }
            },
            null);
      } else {
        List<Op> ops = new ArrayList<>(paths.size());
        for (String path : paths) {
          ops.add(Op.getChildren(toZk(path)));
        }
        zk.multi(
            ops,
            (rc, p, ctx, results) -> {
              if (results == null) {
                result.completeExceptionally(KeeperException.create(Code.get(rc)));
                return;
              }
              List<List<String>> lists = new ArrayList<>(results.size());
              for (int i = 0; i < results.size(); i++) {
                OpResult op = results.get(i);
                if (op instanceof OpResult.GetChildrenResult) {
                  lists.add(((OpResult.GetChildrenResult) op).getChildren());
                } else if (((OpResult.ErrorResult) op).getErr() == Code.NONODE.intValue()) {
                  lists.add(List.of());
                } else {
                  int err = ((OpResult.ErrorResult) op).getErr();
                  result.completeExceptionally(KeeperException.create(Code.get(err), paths.get(i)));
                  return;
                }
              }
              result.complete(lists);
            },
            null);
      }
    } catch (KeeperException | RuntimeException e) {
      result.completeExceptionally(e);
    }
    return result;
  }

  /**
   * Reads a node's data, optionally leaving a data watch (retried as the client's policy allows).
   * Fails with {@link KeeperException.NoNodeException} if the node does not exist, in which case no
   * watch is left: that is why the engine watches with getData and never with exists.
   */
  CompletableFuture<NodeData> getData(String path, Watcher watcher) {
    return retrying(
        () -> {
          CompletableFuture<NodeData> result = new CompletableFuture<>();
          try {
            handle()
                .getData(
                    toZk(path),
                    watcher,
                    (rc, p, ctx, data, stat) -> {
                      if (rc == Code.OK.intValue()) {
                        result.complete(new NodeData(data, stat));
                      } else {
                        result.completeExceptionally(KeeperException.create(Code.get(rc), path));
                      }
                    },
                    null);
          } catch (KeeperException | RuntimeException e) {
            result.completeExceptionally(e);
          }
          return result;
        });
  }

  /** Creates {@code path} and its missing parents as container nodes, off the event thread. */
  CompletableFuture<Void> createContainers(String path) {
    CompletableFuture<Void> result = new CompletableFuture<>();
    Background.run(
        () -> {
          try {
            client.createContainers(path);
            result.complete(null);
          } catch (Exception e) {
            result.completeExceptionally(e);
          }
        });
    return result;
  }

  /**
   * Deletes our nodes: one guaranteed delete for one node, one {@code multi} of deletes for
   * several, falling back to a guaranteed delete per node if the transaction fails (one of them
   * already gone, say). A guaranteed delete that cannot reach ZooKeeper is retried in the
   * background until it succeeds. Completes when ZooKeeper confirmed, or when the deletion was
   * handed to the background.
   */
  CompletableFuture<Void> deleteGuaranteed(List<String> nodePaths) {
    if (nodePaths.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    if (nodePaths.size() == 1) {
      return deleteOneGuaranteed(nodePaths.get(0));
    }
    CompletableFuture<Void> result = new CompletableFuture<>();
    try {
      List<CuratorOp> deletes = new ArrayList<>(nodePaths.size());
      for (String path : nodePaths) {
        deletes.add(client.transactionOp().delete().forPath(path));
      }
      client
          .transaction()
          .inBackground(
              (c, event) -> {
                if (event.getResultCode() == Code.OK.intValue()) {
                  result.complete(null);
                } else {
                  Callbacks.when(deleteEachGuaranteed(nodePaths), (v, e) -> result.complete(null));
                }
              })
          .forOperations(deletes);
    } catch (Exception e) {
      log.debug("Multi-delete of {} could not start; deleting one by one", nodePaths, e);
      Callbacks.when(deleteEachGuaranteed(nodePaths), (v, f) -> result.complete(null));
    }
    return result;
  }

  /**
   * Deletes our nodes in the calling thread, as Curator's own release does: one guaranteed delete
   * for one node, one transaction for several (falling back to a guaranteed delete per node). A
   * delete that cannot reach ZooKeeper is handed to Curator's background retries; the caller does
   * not wait for them, and an interrupt is kept for the caller.
   */
  void deleteNow(List<String> nodePaths) {
    if (nodePaths.size() > 1) {
      try {
        List<CuratorOp> deletes = new ArrayList<>(nodePaths.size());
        for (String path : nodePaths) {
          deletes.add(client.transactionOp().delete().forPath(path));
        }
        client.transaction().forOperations(deletes);
        return;
      } catch (Exception e) {
        keepInterrupt(e);
        log.debug("Multi-delete of {} failed ({}); deleting one by one", nodePaths, e.toString());
      }
    }
    for (String path : nodePaths) {
      try {
        client.delete().quietly().guaranteed().forPath(path);
      } catch (Exception e) {
        keepInterrupt(e);
        log.warn(
            "Deleting lock node {} failed ({}); Curator retries it in the background",
            path,
            e.toString());
      }
    }
  }

  private static void keepInterrupt(Exception e) {
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
  }

  /** {@link #deleteGuaranteed(List)}, without waiting for the outcome. */
  void deleteInBackground(List<String> nodePaths) {
    Callbacks.when(deleteGuaranteed(nodePaths), (v, e) -> {});
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
      client.delete().guaranteed().inBackground(callback).forPath(path);
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

  /**
   * Removes this session's data watch on {@code path} from the server. ZooKeeper can only remove a
   * path's watches all together, so the caller makes sure none of the engine's other waiters in the
   * session still need it; any other watcher loses its watch and is told so with a {@code
   * DataWatchRemoved} event (Curator's and Lockstep's waiters then re-read and watch again).
   */
  void removeDataWatches(String path, long sessionId) {
    try {
      ZooKeeper zk = handle();
      if (zk.getSessionId() != sessionId) {
        return; // the watch died with its session
      }
      zk.removeAllWatches(
          toZk(path),
          Watcher.WatcherType.Data,
          true,
          (rc, p, ctx) -> log.trace("Removed watches on {}: {}", path, Code.get(rc)),
          null);
    } catch (KeeperException | RuntimeException e) {
      log.debug("Could not remove watches on {}: {}", path, e.toString());
    }
  }

  /** A check operation per node, for the caller's own transaction. */
  List<CuratorOp> checks(List<String> nodePaths) {
    List<CuratorOp> checks = new ArrayList<>(nodePaths.size());
    for (String path : nodePaths) {
      try {
        checks.add(client.transactionOp().check().forPath(path));
      } catch (Exception e) {
        throw new LockException("Could not build an ownership check for " + path, e);
      }
    }
    return List.copyOf(checks);
  }

  private <T> CompletableFuture<T> retrying(Supplier<CompletableFuture<T>> attempt) {
    CompletableFuture<T> result = new CompletableFuture<>();
    retry(attempt, result, 0, System.nanoTime());
    return result;
  }

  private <T> void retry(
      Supplier<CompletableFuture<T>> attempt,
      CompletableFuture<T> result,
      int retryCount,
      long startNanos) {
    Callbacks.when(
        attempt.get(),
        (value, failure) -> {
          if (failure == null) {
            result.complete(value);
            return;
          }
          OptionalLong delay =
              Retries.isRetryable(client, failure)
                  ? Retries.delayMillis(client, retryCount, startNanos)
                  : OptionalLong.empty();
          if (delay.isPresent()) {
            Background.schedule(
                delay.getAsLong(), () -> retry(attempt, result, retryCount + 1, startNanos));
          } else {
            result.completeExceptionally(failure);
          }
        });
  }

  /**
   * The current ZooKeeper handle. Curator replaces it when a session expires, so it is fetched for
   * every call. A client that is not started yields a {@link LockException}: nothing can succeed.
   */
  private ZooKeeper handle() throws KeeperException {
    if (client.getState() != CuratorFrameworkState.STARTED) {
      throw new LockException(
          "The Curator client is not started (state " + client.getState() + ")", null);
    }
    try {
      return client.getZookeeperClient().getZooKeeper();
    } catch (KeeperException e) {
      throw e;
    } catch (Exception e) {
      KeeperException loss = new KeeperException.ConnectionLossException();
      loss.initCause(e);
      throw loss;
    }
  }

  /**
   * Resolves a create through Curator's create builder, which applies the client's namespace,
   * ACLProvider and default data, and returns the request it would send.
   */
  CreateRequest resolveCreate(Slot slot, String protectionId) {
    String path = slot.nodePathToCreate(protectionId);
    byte[] data = slot.data();
    try {
      CuratorOp op =
          data == null
              ? client.transactionOp().create().withMode(slot.createMode()).forPath(path)
              : client.transactionOp().create().withMode(slot.createMode()).forPath(path, data);
      return (CreateRequest) op.get().toRequestRecord();
    } catch (Exception e) {
      throw new LockException("Could not prepare the lock node " + path, e);
    }
  }

  private Created created(List<OpResult> results, long session) {
    List<String> paths = new ArrayList<>(results.size());
    long czxid = 0;
    for (OpResult op : results) {
      OpResult.CreateResult create = (OpResult.CreateResult) op;
      paths.add(toClient(create.getPath()));
      czxid = create.getStat().getCzxid();
    }
    return new Created(List.copyOf(paths), czxid, session);
  }

  /** The failure of a multi: the first op that really failed (the others report rollback). */
  private KeeperException multiFailure(int rc, List<Op> ops, List<OpResult> results) {
    if (results != null) {
      for (int i = 0; i < results.size(); i++) {
        OpResult op = results.get(i);
        if (op instanceof OpResult.ErrorResult) {
          int err = ((OpResult.ErrorResult) op).getErr();
          if (err != Code.OK.intValue() && err != Code.RUNTIMEINCONSISTENCY.intValue()) {
            return KeeperException.create(Code.get(err), toClient(ops.get(i).getPath()));
          }
        }
      }
    }
    return KeeperException.create(Code.get(rc));
  }

  String toZk(String clientPath) {
    return ZKPaths.fixForNamespace(client.getNamespace(), clientPath);
  }

  private String toClient(String zkPath) {
    String namespace = client.getNamespace();
    if (zkPath == null || namespace == null || namespace.isEmpty()) {
      return zkPath;
    }
    String root = "/" + namespace;
    if (zkPath.equals(root)) {
      return "/";
    }
    return zkPath.startsWith(root + "/") ? zkPath.substring(root.length()) : zkPath;
  }
}

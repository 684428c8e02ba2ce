package io.lockstep.recipes.locks;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateOptions;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.proto.CreateRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's creates and reads, all asynchronous, on the raw {@link ZooKeeper} handle.
 *
 * <p>A create of a sequential node must never be blindly retried (a retry after a lost answer would
 * leave a second node behind), so creates are sent once and the engine recovers them itself; reads
 * of several queues go in one read-only {@code multi}, which Curator's API does not offer. Paths
 * are kept as the client sees them and translated to and from the namespace here. ACLs and default
 * data come from Curator's own create builder, so the client's {@code ACLProvider} and default data
 * apply exactly as for Curator's recipes.
 */
final class ZkRequests {
  private static final Logger log = LoggerFactory.getLogger(ZkRequests.class);

  private final CuratorFramework client;
  private final Retries retries;
  private final Scheduler scheduler;

  /** Our nodes, one per slot, their creating zxid, and the session the server says owns them. */
  record Created(List<String> nodePaths, long czxid, long owner) {}

  /**
   * The children of each path read, the session that read them, and the latest change of those
   * children the read reflects: the largest pzxid of the paths (0 for paths that do not exist).
   */
  record Children(List<List<String>> lists, long session, long decidedAtZxid) {}

  /** A node's data and stat, and the session that read them. */
  record NodeData(byte[] data, Stat stat, long session) {}

  /** A downgrade's create was refused: the write node it is tied to is gone. */
  static final class TieRefused extends KeeperException.NoNodeException {
    private static final long serialVersionUID = 1L;

    TieRefused(String writeNode) {
      super(writeNode);
    }
  }

  ZkRequests(CuratorFramework client, Retries retries, Scheduler scheduler) {
    this.client = Objects.requireNonNull(client, "client");
    this.retries = retries;
    this.scheduler = scheduler;
  }

  CuratorFramework client() {
    return client;
  }

  /** Whether the client is connected right now (as seen by ZooKeeper's own event thread). */
  boolean isConnected() {
    return client.getZookeeperClient().isConnected();
  }

  /** The current handle's session id, or 0 when there is no usable handle. */
  long currentSessionId() {
    try {
      return handle().getSessionId();
    } catch (KeeperException | RuntimeException e) {
      return 0;
    }
  }

  /**
   * Creates our node in every slot's queue: one create (which returns the node's stat) for one
   * plain slot, else one {@code multi} of creates, with a check of the tied node before each tied
   * create. Sent once, never retried: on connection loss the caller finds out what happened.
   */
  CompletableFuture<Created> create(List<Slot> slots, String protectionId) {
    CompletableFuture<Created> result = new CompletableFuture<>();
    try {
      ZooKeeper zk = handle();
      if (slots.size() == 1 && slots.get(0).tiedTo() == null) {
        CreateRequest request = resolveCreate(slots.get(0), protectionId);
        zk.create(
            request.getPath(),
            request.getData(),
            request.getAcl(),
            slots.get(0).createMode(),
            (rc, path, ctx, name, stat) -> {
              if (rc == Code.OK.intValue()) {
                result.complete(
                    new Created(
                        List.of(toClient(name)), stat.getCzxid(), stat.getEphemeralOwner()));
              } else {
                result.completeExceptionally(KeeperException.create(Code.get(rc), toClient(path)));
              }
            },
            null);
        return result;
      }
      List<Op> ops = new ArrayList<>();
      for (Slot slot : slots) {
        if (slot.tiedTo() != null) {
          ops.add(Op.check(toZk(slot.tiedTo()), -1));
        }
        CreateRequest request = resolveCreate(slot, protectionId);
        ops.add(
            Op.create(
                request.getPath(),
                request.getData(),
                CreateOptions.newBuilder(request.getAcl(), slot.createMode()).build()));
      }
      zk.multi(
          ops,
          (rc, path, ctx, results) -> {
            if (rc == Code.OK.intValue()) {
              result.complete(created(results));
            } else {
              result.completeExceptionally(multiFailure(rc, ops, results));
            }
          },
          null);
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
  CompletableFuture<Children> children(List<String> paths, Watcher childWatcher) {
    return retrying(() -> childrenOnce(paths, childWatcher));
  }

  /** As {@link #children}, sent once: a failure is reported, not retried. */
  CompletableFuture<Children> childrenOnce(List<String> paths, Watcher childWatcher) {
    CompletableFuture<Children> result = new CompletableFuture<>();
    try {
      ZooKeeper zk = handle();
      if (paths.size() == 1) {
        String path = paths.get(0);
        zk.getChildren(
            toZk(path),
            childWatcher,
            (rc, p, ctx, children, stat) -> {
              if (rc == Code.OK.intValue()) {
                result.complete(
                    new Children(List.of(children), zk.getSessionId(), stat.getPzxid()));
              } else if (rc == Code.NONODE.intValue()) {
                result.complete(new Children(List.of(List.of()), zk.getSessionId(), 0));
              } else {
                result.completeExceptionally(KeeperException.create(Code.get(rc), path));
              }
            },
            null);
        return result;
      }
      // Each path's children, then its stat (for the pzxid): a read-only multi has no
      // getChildren2, and a stat read after the children is at least as recent as they are.
      List<Op> ops = new ArrayList<>(2 * paths.size());
      for (String path : paths) {
        ops.add(Op.getChildren(toZk(path)));
        ops.add(Op.getData(toZk(path)));
      }
      zk.multi(
          ops,
          (rc, p, ctx, results) -> {
            if (results == null) {
              result.completeExceptionally(KeeperException.create(Code.get(rc)));
              return;
            }
            List<List<String>> lists = new ArrayList<>(paths.size());
            long pzxid = 0;
            for (int i = 0; i < results.size(); i++) {
              OpResult op = results.get(i);
              if (op instanceof OpResult.GetChildrenResult children) {
                lists.add(children.getChildren());
              } else if (op instanceof OpResult.GetDataResult data) {
                pzxid = Math.max(pzxid, data.getStat().getPzxid());
              } else if (((OpResult.ErrorResult) op).getErr() == Code.NONODE.intValue()) {
                if (i % 2 == 0) {
                  lists.add(List.of());
                }
              } else {
                int err = ((OpResult.ErrorResult) op).getErr();
                result.completeExceptionally(
                    KeeperException.create(Code.get(err), paths.get(i / 2)));
                return;
              }
            }
            result.complete(new Children(lists, zk.getSessionId(), pzxid));
          },
          null);
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
            ZooKeeper zk = handle();
            zk.getData(
                toZk(path),
                watcher,
                (rc, p, ctx, data, stat) -> {
                  if (rc == Code.OK.intValue()) {
                    result.complete(new NodeData(data, stat, zk.getSessionId()));
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

  /**
   * Writes {@code data} to {@code path}, any version (retried as the client's policy allows: the
   * same data twice is the same data). Completes with the node's stat after the write.
   */
  CompletableFuture<Stat> setData(String path, byte[] data) {
    return retrying(
        () -> {
          CompletableFuture<Stat> result = new CompletableFuture<>();
          try {
            handle()
                .setData(
                    toZk(path),
                    data,
                    -1,
                    (rc, p, ctx, stat) -> {
                      if (rc == Code.OK.intValue()) {
                        result.complete(stat);
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
    scheduler.execute(
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
   * Asks the server to remove this session's data watches on {@code path}: all of them, as
   * ZooKeeper can only remove a path's watches together, so the caller makes sure none of the
   * engine's other waiters in the session still needs one (any other watcher is told with a {@code
   * DataWatchRemoved} event, and Curator's and Lockstep's waiters then read again).
   *
   * <p>Never a local-only removal: ZooKeeper's client (3.9) reports a local removal that fails with
   * connection loss as a watch event in the Disconnected state, and its event thread then drops the
   * real Disconnected event as a repeat, so Curator never goes SUSPENDED and no hold hears AT_RISK.
   *
   * @return completes with true once nothing more is to be done (removed, no watch, or the session
   *     or client is gone), or false if the connection failed and the watch may still be there
   */
  CompletableFuture<Boolean> removeDataWatches(String path, long sessionId) {
    CompletableFuture<Boolean> result = new CompletableFuture<>();
    try {
      ZooKeeper zk = handle();
      if (zk.getSessionId() != sessionId) {
        result.complete(true); // the watch died with its session
        return result;
      }
      zk.removeAllWatches(
          toZk(path),
          Watcher.WatcherType.Data,
          false,
          (rc, p, ctx) -> {
            log.trace("Removed watches on {}: {}", path, Code.get(rc));
            result.complete(
                rc != Code.CONNECTIONLOSS.intValue() && rc != Code.OPERATIONTIMEOUT.intValue());
          },
          null);
    } catch (KeeperException | RuntimeException e) {
      log.debug("Could not remove watches on {}: {}", path, e.toString());
      result.complete(true); // no usable handle: the client is closed
    }
    return result;
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

  /** Runs {@code attempt}, again after the policy's delay while it fails in a retryable way. */
  private <T> CompletableFuture<T> retrying(Supplier<CompletableFuture<T>> attempt) {
    return retries.retrying(attempt, scheduler, this::isStarted);
  }

  /** Whether the client is started (not yet closed). */
  boolean isStarted() {
    return client.getState() == CuratorFrameworkState.STARTED;
  }

  /**
   * The current ZooKeeper handle. Curator replaces it when a session expires, so it is fetched for
   * every call. A client that is not started yields a {@link LockException}: nothing can succeed.
   */
  private ZooKeeper handle() throws KeeperException {
    if (!isStarted()) {
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
  private CreateRequest resolveCreate(Slot slot, String protectionId) {
    return resolveCreate(client, slot, protectionId);
  }

  /** The create request {@code client} would send for our node in {@code slot}. */
  static CreateRequest resolveCreate(CuratorFramework client, Slot slot, String protectionId) {
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

  private Created created(List<OpResult> results) {
    List<String> paths = new ArrayList<>(results.size());
    long czxid = 0;
    long owner = 0;
    for (OpResult op : results) {
      if (op instanceof OpResult.CreateResult) {
        OpResult.CreateResult create = (OpResult.CreateResult) op;
        paths.add(toClient(create.getPath()));
        czxid = create.getStat().getCzxid();
        owner = create.getStat().getEphemeralOwner();
      }
    }
    return new Created(List.copyOf(paths), czxid, owner);
  }

  /**
   * The failure of a multi: the first op that really failed (the others report rollback); a failed
   * check is a refused tie.
   */
  private KeeperException multiFailure(int rc, List<Op> ops, List<OpResult> results) {
    if (results != null) {
      for (int i = 0; i < results.size(); i++) {
        OpResult op = results.get(i);
        if (op instanceof OpResult.ErrorResult) {
          int err = ((OpResult.ErrorResult) op).getErr();
          if (err != Code.OK.intValue() && err != Code.RUNTIMEINCONSISTENCY.intValue()) {
            String path = toClient(ops.get(i).getPath());
            return ops.get(i).getType() == ZooDefs.OpCode.check
                ? new TieRefused(path)
                : KeeperException.create(Code.get(err), path);
          }
        }
      }
    }
    return KeeperException.create(Code.get(rc));
  }

  String toZk(String clientPath) {
    return ZKPaths.fixForNamespace(client.getNamespace(), clientPath);
  }

  String toClient(String zkPath) {
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

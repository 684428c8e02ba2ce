package io.lockstep.recipes.internal.zk;

import io.lockstep.recipes.locks.LockException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's reads, writes and watch removals, all asynchronous, on the raw {@link ZooKeeper}
 * handle (its creates are {@link NodeCreates}'). Reads of several queues go in one read-only {@code
 * multi}, which Curator's API does not offer ({@link ChildrenReads}). Paths are kept as the client
 * sees them and translated to and from the namespace here.
 */
public final class ZkRequests {
  private static final Logger log = LoggerFactory.getLogger(ZkRequests.class);

  /** The class of a ZooKeeper client's event thread (package-private in ZooKeeper). */
  private static final String EVENT_THREAD = "org.apache.zookeeper.ClientCnxn$EventThread";

  private final CuratorFramework client;
  private volatile CuratorFramework raw; // the client without its namespace, once made: see raw()
  private final Retries retries;
  private final Scheduler scheduler;

  /**
   * The children of each path read, the session that read them, and the latest change of those
   * children the read reflects: the largest pzxid of the paths (0 for paths that do not exist).
   */
  public record Children(List<List<String>> lists, long session, long decidedAtZxid) {}

  /**
   * Where the answer of a read of children goes: each path's children, the session that read them
   * and the largest pzxid (as in {@link Children}), or the failure (then the rest is null and 0).
   */
  @FunctionalInterface
  public interface ChildrenAnswer {
    void answered(List<List<String>> lists, long session, long decidedAtZxid, Throwable failure);
  }

  /** A node's data and stat, and the session that read them. */
  public record NodeData(byte[] data, Stat stat, long session) {}

  public ZkRequests(CuratorFramework client, Retries retries, Scheduler scheduler) {
    this.client = Objects.requireNonNull(client, "client");
    this.retries = retries;
    this.scheduler = scheduler;
  }

  CuratorFramework client() {
    return client;
  }

  /**
   * Whether the calling thread is a ZooKeeper client's event thread, where answers and watches are
   * delivered: work that would run user code there (an ACLProvider, an observer) goes elsewhere.
   */
  public static boolean onEventThread() {
    return Thread.currentThread().getClass().getName().equals(EVENT_THREAD);
  }

  /**
   * Runs {@code task} on the engine's scheduler, off ZooKeeper's event thread: a send that asks the
   * user's ACLProvider, heard of in a callback there.
   *
   * @throws java.util.concurrent.RejectedExecutionException if the scheduler refuses it
   */
  public void execute(Runnable task) {
    scheduler.execute(task);
  }

  /**
   * {@code client} without its namespace: a facade whose builders take ZooKeeper paths as they are.
   * The engine resolves every Curator request through it, with paths it translated itself, because
   * a namespaced facade's first request makes the namespace node with a blocking call in whatever
   * thread resolves it (waiting for the connection up to the connection timeout, then retrying as
   * the policy allows): a caller's budget, or ZooKeeper's event thread, would wait. The engine
   * makes a missing namespace node itself, with its lock directories ({@code DirectoryCreates}).
   */
  static CuratorFramework withoutNamespace(CuratorFramework client) {
    String namespace = client.getNamespace();
    if (namespace == null || namespace.isEmpty()) {
      return client;
    }
    // Curator makes the facade for a started client only. Before the start (a lock made before its
    // client starts) and after the close no request can go, and a create request resolved through
    // the client itself is only looked at (see NodeCreates.request).
    return client.getState() == CuratorFrameworkState.STARTED
        ? client.usingNamespace(null)
        : client;
  }

  /** {@link #withoutNamespace} of this client, made once the client is started. */
  public CuratorFramework raw() {
    CuratorFramework made = raw;
    if (made == null) {
      made = withoutNamespace(client);
      if (made != client || client.getState() == CuratorFrameworkState.STARTED) {
        raw = made;
      }
    }
    return made;
  }

  /**
   * Runs {@code task} once, after {@code delayMillis} or as soon as the client is connected again,
   * whichever comes first (see {@link Retries#later}).
   */
  void later(long delayMillis, Runnable task) {
    retries.later(scheduler, delayMillis, task);
  }

  /** Whether the client is connected right now (as seen by ZooKeeper's own event thread). */
  public boolean isConnected() {
    return client.getZookeeperClient().isConnected();
  }

  /** The current handle's session id, or 0 when there is no usable handle. */
  public long currentSessionId() {
    try {
      return handle().getSessionId();
    } catch (KeeperException | RuntimeException e) {
      return 0;
    }
  }

  /**
   * Reads the children of each path (retried as the client's policy allows): a plain {@code
   * getChildren} for one path, optionally leaving a child watch, or one read-only {@code multi} for
   * several. A path that does not exist has no children.
   */
  public CompletableFuture<Children> children(List<String> paths, Watcher childWatcher) {
    return retrying(
        () -> {
          CompletableFuture<Children> result = new CompletableFuture<>();
          childrenOnce(
              paths,
              childWatcher,
              (lists, session, zxid, failure) -> {
                if (failure == null) {
                  result.complete(new Children(lists, session, zxid));
                } else {
                  result.completeExceptionally(failure);
                }
              });
          return result;
        });
  }

  /**
   * As {@link #children}, sent once and without a future: the children, or the failure (not
   * retried), go to {@code answer} (on ZooKeeper's event thread, or here if nothing could be sent).
   */
  public void childrenOnce(List<String> paths, Watcher childWatcher, ChildrenAnswer answer) {
    try {
      ZooKeeper zk = handle();
      if (paths.size() == 1) {
        ChildrenReads.ofOne(zk, toZk(paths.get(0)), paths.get(0), childWatcher, answer);
      } else {
        ChildrenReads.ofSeveral(zk, paths, this::toZk, answer);
      }
    } catch (KeeperException | RuntimeException e) {
      answer.answered(null, 0, 0, e);
    }
  }

  /**
   * Reads a node's data, optionally leaving a data watch (retried as the client's policy allows).
   * Fails with {@link KeeperException.NoNodeException} if the node does not exist, in which case no
   * watch is left: that is why the engine watches with getData and never with exists.
   */
  public CompletableFuture<NodeData> getData(String path, Watcher watcher) {
    return retrying(
        () ->
            once(
                (zk, result) ->
                    zk.getData(
                        toZk(path),
                        watcher,
                        (rc, p, ctx, data, stat) ->
                            answer(
                                result,
                                rc,
                                path,
                                () -> new NodeData(data, stat, zk.getSessionId())),
                        null)));
  }

  /**
   * Writes {@code data} to {@code path}, any version (retried as the client's policy allows: the
   * same data twice is the same data). Completes with the node's stat after the write.
   */
  public CompletableFuture<Stat> setData(String path, byte[] data) {
    return retrying(
        () ->
            once(
                (zk, result) ->
                    zk.setData(
                        toZk(path),
                        data,
                        -1,
                        (rc, p, ctx, stat) -> answer(result, rc, path, () -> stat),
                        null)));
  }

  /**
   * Sends one request on the current handle: {@code send} makes it, and its callback completes the
   * result. If no handle can be had, or sending throws, the result fails with that exception.
   */
  private <T> CompletableFuture<T> once(BiConsumer<ZooKeeper, CompletableFuture<T>> send) {
    CompletableFuture<T> result = new CompletableFuture<>();
    try {
      send.accept(handle(), result);
    } catch (KeeperException | RuntimeException e) {
      result.completeExceptionally(e);
    }
    return result;
  }

  /**
   * Completes {@code result} with {@code value} if the answer {@code rc} is OK, else fails it with
   * the answer's exception for {@code path}.
   */
  private static <T> void answer(
      CompletableFuture<T> result, int rc, String path, Supplier<T> value) {
    if (rc == Code.OK.intValue()) {
      result.complete(value.get());
    } else {
      result.completeExceptionally(KeeperException.create(Code.get(rc), path));
    }
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
  public CompletableFuture<Boolean> removeDataWatches(String path, long sessionId) {
    return removeWatches(path, sessionId, Watcher.WatcherType.Data);
  }

  /**
   * As {@link #removeDataWatches}, for this session's child watches on {@code path} (a lease
   * waiter's): every child watcher of the session on it is told with a {@code ChildWatchRemoved}
   * event (Curator's semaphore then reads again; a Lockstep holder then watches its own node).
   */
  public CompletableFuture<Boolean> removeChildWatches(String path, long sessionId) {
    return removeWatches(path, sessionId, Watcher.WatcherType.Children);
  }

  private CompletableFuture<Boolean> removeWatches(
      String path, long sessionId, Watcher.WatcherType type) {
    CompletableFuture<Boolean> result = new CompletableFuture<>();
    try {
      ZooKeeper zk = handle();
      if (zk.getSessionId() != sessionId) {
        result.complete(true); // the watch died with its session
        return result;
      }
      zk.removeAllWatches(
          toZk(path),
          type,
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
  public List<CuratorOp> checks(List<String> nodePaths) {
    List<CuratorOp> checks = new ArrayList<>(nodePaths.size());
    for (String path : nodePaths) {
      try {
        checks.add(raw().transactionOp().check().forPath(toZk(path)));
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
  ZooKeeper handle() throws KeeperException {
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

  public String toZk(String clientPath) {
    return toZk(client, clientPath);
  }

  /**
   * {@code clientPath} of {@code client} as ZooKeeper names it: under the client's namespace, if it
   * has one. Not validated again: a lock's path was at construction, and the server named the nodes
   * under it.
   */
  static String toZk(CuratorFramework client, String clientPath) {
    String namespace = client.getNamespace();
    if (namespace == null || namespace.isEmpty()) {
      return clientPath;
    }
    return ZKPaths.makePath(namespace, clientPath);
  }

  public String toClient(String zkPath) {
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

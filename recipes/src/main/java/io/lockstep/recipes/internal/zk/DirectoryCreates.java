package io.lockstep.recipes.internal.zk;

import io.lockstep.recipes.internal.queue.Slot;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiConsumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.CreateOptions;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.proto.CreateRequest;

/**
 * Our nodes created together with their missing lock directories, in one {@code multi}, so that no
 * lock directory exists without having had a child (see {@link #create}). The part of {@link
 * NodeCreates} for a create that found a directory missing.
 */
final class DirectoryCreates {
  private static final byte[] NO_DATA = new byte[0];

  /** The most sends of {@link #create}: parents made, directories found made. */
  static final int MAX_ROUNDS = 12;

  private final CuratorFramework client;
  private final ZkRequests requests;
  private final NodeCreates creates;

  DirectoryCreates(ZkRequests requests, NodeCreates creates) {
    this.client = requests.client();
    this.requests = requests;
    this.creates = creates;
  }

  /**
   * Creates our node in every slot's queue together with its lock directory, in one {@code multi}:
   * the directory as a container, then the node (with the check of a tied node before it). Either
   * both exist afterwards or neither, so no lock directory is ever left that never had a child,
   * which the server would keep forever by default: not when the attempt is withdrawn meanwhile,
   * nor when the session ends or the process dies between two requests. When the directory's parent
   * is missing too, the multi is sent again with it (and so on up, the client's namespace nodes
   * included: Curator makes them, as containers, only when the client first uses them, and the
   * server reaps them once empty); when a directory turns out to exist (another lock made it
   * meanwhile), it is sent again without it. At most {@link #MAX_ROUNDS} sends; the last failure
   * then is the answer (NoNode when the server keeps reaping the parents). Sent once per round,
   * never retried on a lost answer: the caller finds out what happened, as for {@link
   * NodeCreates#create}.
   *
   * <p>The directories' creates are Curator's, resolved through its builder, so the client's
   * namespace and ACLs apply; the lock directory's create is validated against the client's {@code
   * SchemaSet}, as Curator's own create would validate it (a recipe parent's schema allows a
   * container).
   *
   * @param answer gets our nodes, as {@link NodeCreates#create} answers them, and whether the first
   *     send made them; or the failure
   */
  void create(
      List<Slot> slots,
      String protectionId,
      BiConsumer<? super NodeCreates.Created, Throwable> answer) {
    int[] levels = new int[slots.size()]; // per slot: how many directories, from its own up
    Arrays.fill(levels, 1);
    sendWithDirectories(slots, protectionId, levels, 1, answer);
  }

  private void sendWithDirectories(
      List<Slot> slots,
      String protectionId,
      int[] levels,
      int round,
      BiConsumer<? super NodeCreates.Created, Throwable> answer) {
    try {
      List<Op> ops = new ArrayList<>();
      int[] firstDirectory = new int[slots.size()]; // the op of each slot's top directory
      List<Integer> nodeOps = new ArrayList<>(slots.size());
      for (int i = 0; i < slots.size(); i++) {
        Slot slot = slots.get(i);
        firstDirectory[i] = ops.size();
        String lockDirectory = requests.toZk(slot.path());
        for (String directory : directories(lockDirectory, levels[i])) {
          ops.add(containerOp(directory, directory.equals(lockDirectory)));
        }
        creates.addNodeOps(slot, protectionId, ops, nodeOps);
      }
      ZooKeeper zk = requests.handle();
      zk.multi(
          ops,
          (rc, path, ctx, results) -> {
            if (rc == Code.OK.intValue()) {
              creates.complete(zk, ops, results, nodeOps, round == 1, answer);
            } else if (round < MAX_ROUNDS
                && adjust(slots, levels, firstDirectory, nodeOps, results)) {
              sendAgain(
                  () -> sendWithDirectories(slots, protectionId, levels, round + 1, answer),
                  answer);
            } else {
              answer.accept(null, creates.multiFailure(rc, ops, results));
            }
          },
          null);
    } catch (Exception e) {
      answer.accept(null, e);
    }
  }

  /**
   * Sends the next round on the engine's scheduler: its directories' ACLs come from the user's
   * ACLProvider, never asked on ZooKeeper's event thread, where the last round's answer came.
   */
  private void sendAgain(Runnable round, BiConsumer<?, Throwable> answer) {
    try {
      requests.execute(round);
    } catch (RuntimeException refused) {
      answer.accept(null, refused);
    }
  }

  /**
   * After a failed send: one directory more for the slot whose top directory's parent is missing
   * (or whose directory went missing), fewer for the slot whose directory exists already.
   *
   * @return whether to send again
   */
  private boolean adjust(
      List<Slot> slots,
      int[] levels,
      int[] firstDirectory,
      List<Integer> nodeOps,
      List<OpResult> results) {
    int failed = failedOp(results);
    for (int i = slots.size() - 1; i >= 0; i--) {
      if (failed < firstDirectory[i]) {
        continue;
      }
      int code = ((OpResult.ErrorResult) results.get(failed)).getErr();
      int position = failed - firstDirectory[i]; // 0: the top directory of this send
      if (position < levels[i]) { // one of the slot's directories
        if (code == Code.NODEEXISTS.intValue()) {
          levels[i] -= position + 1; // it and those above it exist: make the ones below
          return true;
        }
        if (code == Code.NONODE.intValue()
            && position == 0
            && levels[i] < depth(requests.toZk(slots.get(i).path()))) {
          levels[i]++; // its parent is missing too
          return true;
        }
        return false;
      }
      if (failed == nodeOps.get(i) && code == Code.NONODE.intValue() && levels[i] == 0) {
        levels[i] = 1; // the directory went missing since it was found made: make it again
        return true;
      }
      return false;
    }
    return false;
  }

  /** The index of the op that failed a multi (the others report a rollback), or -1. */
  private static int failedOp(List<OpResult> results) {
    if (results == null) {
      return -1;
    }
    for (int i = 0; i < results.size(); i++) {
      if (results.get(i) instanceof OpResult.ErrorResult error
          && error.getErr() != Code.OK.intValue()
          && error.getErr() != Code.RUNTIMEINCONSISTENCY.intValue()) {
        return i;
      }
    }
    return -1;
  }

  /**
   * The top {@code levels} directories ending at {@code path}, a ZooKeeper path (the namespace
   * included), from the top down.
   */
  private static List<String> directories(String path, int levels) {
    List<String> directories = new ArrayList<>(levels);
    String directory = path;
    for (int i = 0; i < levels; i++) {
      directories.add(0, directory);
      directory = ZKPaths.getPathAndNode(directory).getPath();
    }
    return directories;
  }

  /** How many directories {@code path} has below the root, itself included. */
  private static int depth(String path) {
    return ZKPaths.split(path).size();
  }

  /**
   * The create op of the container directory {@code zkPath}, the lock directory's validated by the
   * schema. Its ACL is the one Curator would give it: for a directory in the client's namespace,
   * the client's ACLProvider's for its path as the client names it (as Curator's create asks it);
   * for the namespace node and any node above it, the ACLProvider's for its full path (as Curator
   * asks when it makes the namespace at the client's first use). The server reaps an empty
   * namespace container like any other, so a lock may have to make it again. Resolved without the
   * client's namespace (see {@link ZkRequests#withoutNamespace}).
   */
  private Op containerOp(String zkPath, boolean lockDirectory) throws Exception {
    String aclPath = inNamespace(zkPath) ? requests.toClient(zkPath) : zkPath;
    CreateRequest request =
        NodeCreates.request(client, zkPath, aclPath, NO_DATA, CreateMode.CONTAINER);
    if (lockDirectory) {
      client
          .getSchemaSet()
          .getSchema(aclPath)
          .validateCreate(CreateMode.CONTAINER, aclPath, NO_DATA, request.getAcl());
    }
    return Op.create(
        request.getPath(),
        request.getData(),
        CreateOptions.newBuilder(request.getAcl(), CreateMode.CONTAINER).build());
  }

  /** Whether {@code zkPath} is below the client's namespace node (any path, without one). */
  private boolean inNamespace(String zkPath) {
    String namespace = client.getNamespace();
    return namespace == null
        || namespace.isEmpty()
        || zkPath.startsWith(ZKPaths.makePath("/", namespace) + "/");
  }
}

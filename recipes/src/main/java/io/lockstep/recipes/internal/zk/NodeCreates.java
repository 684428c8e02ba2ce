package io.lockstep.recipes.internal.zk;

import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.locks.LockException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.CreateOptions;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.proto.CreateRequest;

/**
 * The engine's creates: our lock nodes, and missing lock directories as containers.
 *
 * <p>A create of a sequential node must never be blindly retried (a retry after a lost answer would
 * leave a second node behind), so creates are sent once and the engine recovers them itself (it
 * finds its node by its protection id). ACLs and default data come from Curator's own create
 * builder, so the client's {@code ACLProvider}, namespace and default data apply exactly as for
 * Curator's recipes.
 */
public final class NodeCreates {
  private static final byte[] NO_DATA = new byte[0];

  private final CuratorFramework client;
  private final ZkRequests requests;

  /** Our nodes, one per slot, their creating zxid, and the session the server says owns them. */
  public record Created(List<String> nodePaths, long czxid, long owner) {}

  /** A downgrade's create was refused: the write node it is tied to is gone. */
  public static final class TieRefused extends KeeperException.NoNodeException {
    private static final long serialVersionUID = 1L;

    TieRefused(String writeNode) {
      super(writeNode);
    }
  }

  public NodeCreates(ZkRequests requests) {
    this.client = requests.client();
    this.requests = requests;
  }

  /**
   * Creates our node in every slot's queue: one create (which returns the node's stat) for one
   * plain slot, else one {@code multi} of creates, with a check of the tied node before each tied
   * create. Sent once, never retried: on connection loss the caller finds out what happened.
   */
  public CompletableFuture<Created> create(List<Slot> slots, String protectionId) {
    CompletableFuture<Created> result = new CompletableFuture<>();
    try {
      ZooKeeper zk = requests.handle();
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
                        List.of(requests.toClient(name)),
                        stat.getCzxid(),
                        stat.getEphemeralOwner()));
              } else {
                result.completeExceptionally(
                    KeeperException.create(Code.get(rc), requests.toClient(path)));
              }
            },
            null);
        return result;
      }
      List<Op> ops = new ArrayList<>();
      for (Slot slot : slots) {
        if (slot.tiedTo() != null) {
          ops.add(Op.check(requests.toZk(slot.tiedTo()), -1));
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
   * Creates the lock directory {@code path} and its missing parents as container nodes, each create
   * asynchronous, so that no thread waits on them. The directory first, then on NoNode its parent
   * (and so on up), then the directory again: where the parents exist, as for most keys of a hashed
   * layout, one request. Every directory is made immediately before the create of the node below
   * it, so none is left without ever having had a child (which the server keeps forever). The
   * directory's own create goes through Curator's builder, so the client's namespace, ACLs and
   * {@code SchemaSet} apply to it, as a container (a recipe parent's schema allows it); the parents
   * are plain requests with the client's ACLs, as Curator's {@code
   * creatingParentContainersIfNeeded} makes them. A NoNode after the parents were made (one was
   * reaped meanwhile) fails the future with NoNode: the engine then makes the parents again, a
   * bounded number of times.
   */
  public CompletableFuture<Void> createContainers(String path) {
    CompletableFuture<Void> result = new CompletableFuture<>();
    createContainer(path, true, false, result);
    return result;
  }

  private void createContainer(
      String path, boolean own, boolean parentMade, CompletableFuture<Void> result) {
    try {
      if (own) {
        client
            .create()
            .withMode(CreateMode.CONTAINER)
            .inBackground(
                (c, event) ->
                    containerCreated(path, own, parentMade, event.getResultCode(), result))
            .forPath(path, NO_DATA);
      } else {
        CreateRequest request = resolveContainer(path);
        requests
            .handle()
            .create(
                request.getPath(),
                request.getData(),
                request.getAcl(),
                CreateMode.CONTAINER,
                (rc, zkPath, ctx, name) -> containerCreated(path, own, parentMade, rc, result),
                null);
      }
    } catch (Exception e) {
      result.completeExceptionally(e);
    }
  }

  private void containerCreated(
      String path, boolean own, boolean parentMade, int rc, CompletableFuture<Void> result) {
    Code code = Code.get(rc);
    if (code == Code.OK || code == Code.NODEEXISTS) {
      result.complete(null); // NodeExists: by another lock meanwhile, or by a retried create
    } else if (code == Code.NONODE
        && !parentMade
        && !ZKPaths.getPathAndNode(path).getPath().equals("/")) {
      CompletableFuture<Void> parent = new CompletableFuture<>();
      createContainer(ZKPaths.getPathAndNode(path).getPath(), false, false, parent);
      Callbacks.when(
          parent,
          (v, failure) -> {
            if (failure != null) {
              result.completeExceptionally(failure);
            } else {
              createContainer(path, own, true, result);
            }
          });
    } else {
      result.completeExceptionally(KeeperException.create(code, path));
    }
  }

  /** The create request {@code client} would send for the container {@code path}, no data. */
  private CreateRequest resolveContainer(String path) throws Exception {
    CuratorOp op =
        client.transactionOp().create().withMode(CreateMode.CONTAINER).forPath(path, NO_DATA);
    return (CreateRequest) op.get().toRequestRecord();
  }

  /**
   * Resolves a create through Curator's create builder, which applies the client's namespace,
   * ACLProvider and default data, and returns the request it would send.
   */
  private CreateRequest resolveCreate(Slot slot, String protectionId) {
    return resolveCreate(client, slot, protectionId);
  }

  /** The create request {@code client} would send for our node in {@code slot}. */
  public static CreateRequest resolveCreate(
      CuratorFramework client, Slot slot, String protectionId) {
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
        paths.add(requests.toClient(create.getPath()));
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
            String path = requests.toClient(ops.get(i).getPath());
            return ops.get(i).getType() == ZooDefs.OpCode.check
                ? new TieRefused(path)
                : KeeperException.create(Code.get(err), path);
          }
        }
      }
    }
    return KeeperException.create(Code.get(rc));
  }
}

package io.lockstep.recipes.internal.zk;

import io.lockstep.recipes.internal.queue.NodeShape;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.locks.LockException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.CreateOptions;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.proto.CreateRequest;

/**
 * The engine's creates: our lock nodes, alone or with their missing lock directories as containers
 * ({@link DirectoryCreates}).
 *
 * <p>A create of a sequential node must never be blindly retried (a retry after a lost answer would
 * leave a second node behind), so creates are sent once and the engine recovers them itself (it
 * finds its node by its protection id). ACLs and default data come from Curator's own create
 * builder, so the client's {@code ACLProvider}, namespace and default data apply exactly as for
 * Curator's recipes.
 */
public final class NodeCreates {
  private final CuratorFramework client;
  private final ZkRequests requests;
  private final DirectoryCreates directories;
  private volatile NodeShape lastShape; // the shape slots share while it stays the same

  /**
   * Our nodes, one per slot, their creating zxid, the session the server says owns them, and
   * whether the request that made them is the first sent (a read sent right behind it sees them).
   */
  public record Created(List<String> nodePaths, long czxid, long owner, boolean firstSend) {}

  /** A downgrade's create was refused: the write node it is tied to is gone. */
  public static final class TieRefused extends KeeperException.NoNodeException {
    private static final long serialVersionUID = 1L;

    TieRefused(String writeNode) {
      super(writeNode);
    }
  }

  /** The answer of a plain create: its context is the caller's answer. One for every create. */
  private final AsyncCallback.Create2Callback created = this::created;

  public NodeCreates(ZkRequests requests) {
    this.client = requests.client();
    this.requests = requests;
    this.directories = new DirectoryCreates(requests, this);
  }

  /**
   * Creates our node in every slot's queue: one create (which returns the node's stat) for one
   * plain slot, else one {@code multi} of creates, with a check of the tied node before each tied
   * create. Sent once, never retried: on connection loss the caller finds out what happened. The
   * answer goes to {@code answer}: our nodes, or the failure.
   */
  public void create(
      List<Slot> slots, String protectionId, BiConsumer<? super Created, Throwable> answer) {
    try {
      ZooKeeper zk = requests.handle();
      if (slots.size() == 1 && slots.get(0).tiedTo() == null) {
        Slot slot = slots.get(0);
        String nodePath = slot.nodePathToCreate(protectionId);
        NodeShape shape = shape(slot, nodePath);
        zk.create(
            requests.toZk(nodePath), shape.data(), shape.acl(), slot.createMode(), created, answer);
        return;
      }
      List<Op> ops = new ArrayList<>();
      List<Integer> nodeOps = new ArrayList<>(slots.size());
      for (Slot slot : slots) {
        addNodeOps(slot, protectionId, ops, nodeOps);
      }
      zk.multi(
          ops,
          (rc, path, ctx, results) -> {
            if (rc == Code.OK.intValue()) {
              complete(zk, ops, results, nodeOps, true, answer);
            } else {
              answer.accept(null, multiFailure(rc, ops, results));
            }
          },
          null);
    } catch (KeeperException | RuntimeException e) {
      answer.accept(null, e);
    }
  }

  /** A plain create was answered: our node, with its stat, or the failure. */
  @SuppressWarnings("unchecked") // the context of every plain create is its caller's answer
  private void created(int rc, String path, Object context, String name, Stat stat) {
    BiConsumer<? super Created, Throwable> answer =
        (BiConsumer<? super Created, Throwable>) context;
    if (rc == Code.OK.intValue()) {
      answer.accept(
          new Created(
              List.of(requests.toClient(name)), stat.getCzxid(), stat.getEphemeralOwner(), true),
          null);
    } else {
      answer.accept(null, KeeperException.create(Code.get(rc), requests.toClient(path)));
    }
  }

  /**
   * Creates our node in every slot's queue together with its missing lock directories, in one
   * {@code multi}: see {@link DirectoryCreates}. The answer goes to {@code answer}, as {@link
   * #create}'s does.
   */
  public void createWithDirectories(
      List<Slot> slots, String protectionId, BiConsumer<? super Created, Throwable> answer) {
    directories.create(slots, protectionId, answer);
  }

  /**
   * Adds our node in {@code slot} to a multi's {@code ops}: the check of the node it is tied to, if
   * any, then its create, whose index goes to {@code nodeOps} (for {@link #created}).
   */
  void addNodeOps(Slot slot, String protectionId, List<Op> ops, List<Integer> nodeOps) {
    if (slot.tiedTo() != null) {
      ops.add(Op.check(requests.toZk(slot.tiedTo()), -1));
    }
    String path = slot.nodePathToCreate(protectionId);
    NodeShape shape = shape(slot, path);
    nodeOps.add(ops.size());
    ops.add(
        Op.create(
            requests.toZk(path),
            shape.data(),
            CreateOptions.newBuilder(shape.acl(), slot.createMode()).build()));
  }

  /**
   * How this client creates {@code slot}'s nodes: the ACL and data Curator's create builder
   * resolves for the slot's first node ({@code nodePath}), kept by the slot for its later creates.
   * A lock's nodes differ only in their protection id and sequence number, so the ACLProvider is
   * asked for the first node's path once per lock object and queue, not at every create (a
   * revocable lock's queue is new at every acquire: it asks every time).
   */
  private NodeShape shape(Slot slot, String nodePath) {
    NodeShape shape = slot.shape();
    if (shape == null || !shape.isFor(client)) {
      CreateRequest resolved = resolveAt(client, slot, nodePath);
      shape = shared(new NodeShape(client, resolved.getAcl(), resolved.getData()));
      slot.shape(shape);
    }
    return shape;
  }

  /**
   * Whether a create in {@code slot} runs no user code: the shape of its nodes was resolved for
   * this client already, so the client's ACLProvider (and its compression) is not asked again.
   */
  public boolean resolved(Slot slot) {
    NodeShape shape = slot.shape();
    return shape != null && shape.isFor(client);
  }

  /**
   * Resolves the shape of {@code slot}'s nodes now, as its first create would (for a node named
   * with {@code protectionId}), so that the creates to come ask no user code: in a thread where the
   * ACLProvider may run, ahead of creates sent from ZooKeeper's event thread.
   *
   * @throws LockException if the ACLProvider failed (a create asks it again)
   */
  public void resolve(Slot slot, String protectionId) {
    var unused = shape(slot, slot.nodePathToCreate(protectionId));
  }

  /**
   * {@code made}, or the last shape resolved if it is the same: the slots of a client's locks share
   * one shape while their ACL and data are the same (the usual case: an ACLProvider that gives
   * every path the same ACL), so an idle lock object per key keeps none of its own.
   */
  private NodeShape shared(NodeShape made) {
    NodeShape last = lastShape;
    if (last != null && last.sameAs(made)) {
      return last;
    }
    lastShape = made;
    return made;
  }

  /**
   * The create request {@code client} would send for our node in {@code slot}: its namespace, its
   * ACLProvider's ACL for the node's path (as Curator's transaction create asks it) and its default
   * data, resolved without making the namespace node (see {@link ZkRequests#withoutNamespace}).
   */
  public static CreateRequest resolveCreate(
      CuratorFramework client, Slot slot, String protectionId) {
    return resolveAt(client, slot, slot.nodePathToCreate(protectionId));
  }

  /** As {@link #resolveCreate}, for the node at {@code path} (a client path) in {@code slot}. */
  private static CreateRequest resolveAt(CuratorFramework client, Slot slot, String path) {
    try {
      return request(client, ZkRequests.toZk(client, path), path, slot.data(), slot.createMode());
    } catch (Exception e) {
      throw new LockException("Could not prepare the lock node " + path, e);
    }
  }

  /**
   * The create request Curator's transaction create resolves for {@code aclPath} (ACL and default
   * data from {@code client}; {@code data} if not null), sent to {@code zkPath}; resolved without
   * the client's namespace, so that it never makes the namespace node itself.
   */
  static CreateRequest request(
      CuratorFramework client, String zkPath, String aclPath, byte[] data, CreateMode mode)
      throws Exception {
    CuratorFramework raw = ZkRequests.withoutNamespace(client);
    CuratorOp op =
        data == null
            ? raw.transactionOp().create().withMode(mode).forPath(aclPath)
            : raw.transactionOp().create().withMode(mode).forPath(aclPath, data);
    CreateRequest resolved = (CreateRequest) op.get().toRequestRecord();
    return new CreateRequest(zkPath, resolved.getData(), resolved.getAcl(), resolved.getFlags());
  }

  /**
   * Answers {@code answer} with our nodes among a successful multi's results: those of the ops at
   * {@code nodeOps} (the others are checks, or the creates of directories), with their stat.
   *
   * <p>A client with a chroot in its connect string gets its multi's create results unlike a plain
   * create's (ZooKeeper's client, 3.9.5 and earlier): it rewrites each create op for the chroot as
   * a plain {@code create}, whose reply carries no stat, and passes the created paths on with the
   * chroot in front. The chroot is cut off here (the path is the op's path, plus the sequence
   * number), and the stat of our first node is then read with one {@code exists}, sent once: the
   * nodes of one multi share its zxid and session, so one stat serves them all. If that read fails,
   * the answer is its error: the nodes exist, and the caller finds them by their protection id as
   * after a lost answer (a node already gone is found missing and created again).
   */
  void complete(
      ZooKeeper zk,
      List<Op> ops,
      List<OpResult> results,
      List<Integer> nodeOps,
      boolean firstSend,
      BiConsumer<? super Created, Throwable> answer) {
    List<String> paths = new ArrayList<>(nodeOps.size());
    Stat stat = null;
    for (int index : nodeOps) {
      OpResult.CreateResult create = (OpResult.CreateResult) results.get(index);
      paths.add(requests.toClient(withoutChroot(ops.get(index).getPath(), create.getPath())));
      stat = create.getStat();
    }
    List<String> nodes = List.copyOf(paths);
    if (stat != null) {
      answer.accept(new Created(nodes, stat.getCzxid(), stat.getEphemeralOwner(), firstSend), null);
      return;
    }
    String first = requests.toZk(nodes.get(0));
    zk.exists(
        first,
        false,
        (rc, path, ctx, read) -> {
          if (rc == Code.OK.intValue()) {
            answer.accept(
                new Created(nodes, read.getCzxid(), read.getEphemeralOwner(), firstSend), null);
          } else {
            answer.accept(null, KeeperException.create(Code.get(rc), requests.toClient(first)));
          }
        },
        null);
  }

  /**
   * The path a create made, as this handle names it: {@code created} without the chroot that
   * ZooKeeper's client leaves in front of a multi's created paths. {@code sent} is the op's own
   * path, which the created path ends with, but for a sequence number.
   */
  static String withoutChroot(String sent, String created) {
    int at = created.lastIndexOf(sent);
    return at > 0 ? created.substring(at) : created;
  }

  /**
   * The failure of a multi: the first op that really failed (the others report rollback); a failed
   * check is a refused tie.
   */
  KeeperException multiFailure(int rc, List<Op> ops, List<OpResult> results) {
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

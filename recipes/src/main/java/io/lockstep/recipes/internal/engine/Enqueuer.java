package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.queue.NodeNames;
import io.lockstep.recipes.internal.queue.Slot;
import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.internal.zk.NodeCreates;
import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.internal.zk.ZkRequests;
import io.lockstep.recipes.locks.LockDriver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Watcher;

/**
 * Puts our node in every queue: sends the create (once; never blindly retried), creates missing
 * lock directories, and after a create whose answer was lost finds our node by its protection id.
 * Right behind a create goes the first read of the queue, without waiting for the create's answer:
 * ZooKeeper answers one session's requests in order, so the read sees our node, and an uncontended
 * acquire costs one round trip. Every answer goes back as a {@link StateEvent}.
 */
public final class Enqueuer {
  private final ZkRequests zk;
  private final NodeCreates creates;
  private final List<Slot> slots;
  private final List<String> lockPaths;
  private final Watcher childWatcher;
  private final LocalQueues localQueues;
  private final Consumer<StateEvent> events;

  /**
   * @param lockPaths the queues' paths, {@link #lockPaths} of {@code slots}
   * @param childWatcher the watch the first read leaves (a single queue's), or null
   */
  Enqueuer(
      LockSettings settings,
      List<Slot> slots,
      List<String> lockPaths,
      Watcher childWatcher,
      Consumer<StateEvent> events) {
    this.zk = settings.zk();
    this.creates = settings.creates();
    this.slots = List.copyOf(slots);
    this.lockPaths = lockPaths;
    this.childWatcher = childWatcher;
    this.localQueues = settings.engine().localQueues();
    this.events = events;
  }

  public static List<String> lockPaths(List<Slot> slots) {
    if (slots.size() == 1) {
      return slots.get(0).paths();
    }
    List<String> paths = new ArrayList<>(slots.size());
    for (Slot slot : slots) {
      paths.add(slot.path());
    }
    return List.copyOf(paths);
  }

  /**
   * One create, or one multi of creates (with the check of a downgrade's write node), and right
   * behind it the first read of the queue, unless another attempt of this process is live in the
   * same single queue: then our node likely follows a local one, which needs no read at all.
   */
  void create(Step.Create step) {
    send(step.epoch(), step.protectionId(), false);
  }

  /**
   * A create that found a lock directory missing, sent again together with the directories (one
   * multi: see {@link NodeCreates#createWithDirectories}), with the first read right behind it.
   */
  void createWithDirectories(Step.CreateWithDirectories step) {
    send(step.epoch(), step.protectionId(), true);
  }

  /**
   * Sends a create and the first read right behind it (see {@link #create}); a create sent again
   * with its directories may not follow a local attempt, and a read behind it saw nothing of ours,
   * so the state reads again itself.
   */
  private void send(int e, String protectionId, boolean withDirectories) {
    Send send = new Send(e, withDirectories || !followsLocalAttempt());
    if (withDirectories) {
      // The directories' ACLs come from the user's ACLProvider: asked on the scheduler's thread,
      // not on ZooKeeper's event thread, where the create that found a directory missing was heard.
      try {
        zk.execute(() -> sendWithDirectories(send, protectionId));
      } catch (RuntimeException refused) {
        send.accept(null, refused);
      }
    } else {
      creates.create(slots, protectionId, send);
      readBehind(send);
    }
  }

  private void sendWithDirectories(Send send, String protectionId) {
    creates.createWithDirectories(slots, protectionId, send);
    readBehind(send);
  }

  private void readBehind(Send send) {
    if (send.readBehind) {
      // Sent once, not retried: its answer comes right after the create's, so it cannot be stale.
      zk.childrenOnce(lockPaths, childWatcher, send);
    }
  }

  private static final AtomicIntegerFieldUpdater<Send> PROGRESS =
      AtomicIntegerFieldUpdater.newUpdater(Send.class, "progress");

  /**
   * One create and the read behind it, which answer it without a future: the create's answer goes
   * to the state first, then the read's, and only if it is the first read of our nodes. ZooKeeper
   * answers them in that order, but for a chrooted client's multi, whose answer needs a request
   * more (see {@link NodeCreates#complete}): then the read's answer waits here for the create's.
   */
  private final class Send
      implements BiConsumer<NodeCreates.Created, Throwable>, ZkRequests.ChildrenAnswer {
    private static final int CREATE_HEARD = 1; // the create's answer went to the state
    private static final int READ_COUNTS = 2; // set with it: the read behind is our nodes' first
    private static final int READ_HEARD = 4; // the read's answer came: in {@code children}

    private final int epoch;
    private final boolean readBehind;
    volatile int progress; // the bits above, each set once, by PROGRESS
    private List<List<String>> children; // the read's answer, null if it failed; before READ_HEARD
    private long readAtZxid; // and the latest change it reflects; written before READ_HEARD

    Send(int epoch, boolean readBehind) {
      this.epoch = epoch;
      this.readBehind = readBehind;
    }

    /** The create's answer. */
    @Override
    public void accept(NodeCreates.Created created, Throwable failure) {
      boolean counts = false;
      try {
        if (failure == null) {
          counts = readBehind && created.firstSend();
          events.accept(created(epoch, created, counts));
        } else if (Retries.unwrap(failure) instanceof NodeCreates.TieRefused refused) {
          events.accept(new StateEvent.TieRefused(epoch, refused.getPath()));
        } else {
          events.accept(new StateEvent.CreateFailed(epoch, failure));
        }
      } finally {
        int before = set(CREATE_HEARD | (counts ? READ_COUNTS : 0));
        if (counts && (before & READ_HEARD) != 0) {
          readHeard();
        }
      }
    }

    /** The read's answer: heard now if the create's was, else once it is. */
    @Override
    public void answered(List<List<String>> lists, long session, long zxid, Throwable failure) {
      children = failure == null ? lists : null;
      readAtZxid = zxid;
      int before = set(READ_HEARD);
      if ((before & READ_COUNTS) != 0) {
        readHeard();
      }
    }

    private void readHeard() {
      if (children != null) {
        events.accept(new StateEvent.QueueRead(epoch, children, zk.isConnected(), readAtZxid));
      } else {
        events.accept(new StateEvent.FirstReadFailed(epoch));
      }
    }

    /** Sets {@code bits}; returns the bits set before. */
    private int set(int bits) {
      int before;
      do {
        before = progress;
      } while (!PROGRESS.compareAndSet(this, before, before | bits));
      return before;
    }
  }

  private boolean followsLocalAttempt() {
    return appendOnly() && localQueues.othersActive(zk.toZk(lockPaths.get(0)));
  }

  /** The answer of a create, with the local node right before ours if there is one. */
  private StateEvent.Created created(int e, NodeCreates.Created created, boolean readBehind) {
    if (!appendOnly()) {
      return new StateEvent.Created(
          e, created.nodePaths(), created.czxid(), created.owner(), readBehind, null, false);
    }
    String ours = created.nodePaths().get(0);
    LocalQueues.LocalNode before = localQueues.before(zk.toZk(lockPaths.get(0)), zk.toZk(ours));
    LockDriver driver = slots.get(0).driver();
    if (before == null || !ordersBySequence(driver, ours, zk.toClient(before.zkPath()))) {
      return new StateEvent.Created(
          e, created.nodePaths(), created.czxid(), created.owner(), readBehind, null, false);
    }
    String predecessor = zk.toClient(before.zkPath());
    return new StateEvent.Created(
        e,
        created.nodePaths(),
        created.czxid(),
        created.owner(),
        readBehind,
        predecessor,
        before.owner().wasGrantedWith(predecessor));
  }

  /** One queue whose new nodes always sort last. */
  private boolean appendOnly() {
    return slots.size() == 1 && slots.get(0).driver().newNodesSortLast();
  }

  /** Whether the driver sorts both nodes by their sequence numbers alone. */
  private static boolean ordersBySequence(LockDriver driver, String ours, String theirs) {
    String ourName = NodeNames.nameOf(ours);
    String theirName = NodeNames.nameOf(theirs);
    return driver.sortKey(ourName).equals(ourName.substring(ourName.length() - 10))
        && driver.sortKey(theirName).equals(theirName.substring(theirName.length() - 10));
  }

  /**
   * Reads the queues and looks for our protection id. A node found there is ours only if its
   * ephemeral owner is the session that read it (the state decides); a node of an earlier session,
   * which Curator abandoned, is deleted.
   */
  void findOwnNode(Step.FindOwnNode step) {
    int e = step.epoch();
    String prefix = NodeNames.prefix(step.protectionId());
    Callbacks.when(
        zk.children(lockPaths, null),
        (children, failure) -> {
          if (failure != null) {
            events.accept(
                Retries.code(failure) == Code.NONODE // a directory is missing: no create happened
                    ? new StateEvent.OwnNodeSearched(e, List.of(), false, 0, 0, 0)
                    : new StateEvent.OwnNodeSearchFailed(e, failure));
            return;
          }
          List<String> found = NodeNames.withPrefix(lockPaths, children.lists(), prefix, true);
          if (found.isEmpty()) {
            events.accept(
                new StateEvent.OwnNodeSearched(e, found, false, 0, 0, children.session()));
            return;
          }
          boolean complete = found.size() == slots.size();
          Callbacks.when(
              zk.getData(found.get(0), null),
              (data, readFailure) -> {
                if (readFailure == null) {
                  events.accept(
                      new StateEvent.OwnNodeSearched(
                          e,
                          found,
                          complete,
                          data.stat().getEphemeralOwner(),
                          data.stat().getCzxid(),
                          data.session()));
                } else if (Retries.code(readFailure) == Code.NONODE) {
                  events.accept(
                      new StateEvent.OwnNodeSearched(e, found, false, 0, 0, children.session()));
                } else {
                  events.accept(new StateEvent.OwnNodeSearchFailed(e, readFailure));
                }
              });
        });
  }
}

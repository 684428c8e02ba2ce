package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.internal.zk.ZkRequests;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads of our own node: before a revocable lock's grant (it watches its node for revocation
 * requests), while held (its data watch tells of deletion and revocation requests; armed once a
 * hold outlasts its grace), and after a reconnect (is it still there, still ours?). Also the child
 * watch a holder's last queue read leaves, which tells it of the queue's first change: so an
 * uncontended hold costs no extra request.
 */
final class OwnNodeReads {
  private static final Logger log = LoggerFactory.getLogger(OwnNodeReads.class);

  /** Curator's revocation request, written by {@code Revoker.attemptRevoke} into a lock node. */
  private static final byte[] REVOKE_MESSAGE = "__REVOKE__".getBytes(StandardCharsets.UTF_8);

  private final ZkRequests zk;
  private final List<String> lockPaths;
  private final Consumer<StateEvent> events;
  private final String description;
  private volatile OwnNodeWatcher ownNodeWatcher; // for the latest epoch asked

  OwnNodeReads(
      ZkRequests zk, List<String> lockPaths, Consumer<StateEvent> events, String description) {
    this.zk = zk;
    this.lockPaths = lockPaths;
    this.events = events;
    this.description = description;
  }

  /**
   * The child watch a single-queue read leaves: a holder hears the queue's next change. One per
   * attempt, so that ZooKeeper keeps one watch however often the attempt reads.
   */
  static Watcher queueWatcher(Consumer<StateEvent> events) {
    return event -> {
      if (event.getType() == EventType.NodeChildrenChanged
          || event.getType() == EventType.ChildWatchRemoved) { // a lease waiter's removal
        events.accept(StateEvent.QUEUE_CHANGED);
      }
    };
  }

  /** Reads our node and leaves a data watch on it. */
  void readOwnNode(Step.ReadOwnNode step) {
    int e = step.epoch();
    Callbacks.when(
        zk.getData(step.path(), step.watch() ? watcherFor(e) : null),
        (data, failure) -> {
          if (failure == null) {
            events.accept(
                new StateEvent.OwnNodeRead(
                    e,
                    step.purpose(),
                    Arrays.equals(data.data(), REVOKE_MESSAGE),
                    data.stat().getEphemeralOwner(),
                    zk.isConnected()));
          } else {
            events.accept(new StateEvent.OwnNodeReadFailed(e, step.purpose(), failure));
          }
        });
  }

  /**
   * After a reconnect: every node still there and owned by our session? One getData for one queue
   * (which also re-arms its watch); for several, one read of all queues and one getData.
   */
  void verify(Step.Verify step) {
    int e = step.epoch();
    List<String> ours = step.nodes();
    boolean single = ours.size() == 1;
    CompletableFuture<Boolean> present =
        single
            ? CompletableFuture.completedFuture(true)
            : zk.children(lockPaths, null).thenApply(children -> allPresent(ours, children));
    Callbacks.when(
        present.thenCompose(
            all ->
                zk.getData(ours.get(0), single ? watcherFor(e) : null)
                    .thenApply(data -> all && data.stat().getEphemeralOwner() == step.owner())),
        (stillOurs, failure) -> {
          if (failure == null) {
            events.accept(new StateEvent.Verified(e, stillOurs, zk.isConnected()));
          } else if (Retries.code(failure) == Code.NONODE) {
            events.accept(new StateEvent.Verified(e, false, zk.isConnected()));
          } else {
            log.debug("Could not verify lock {} after reconnecting: {}", description, failure);
          }
        });
  }

  private static boolean allPresent(List<String> ours, ZkRequests.Children children) {
    for (int i = 0; i < ours.size(); i++) {
      if (!children.lists().get(i).contains(ZKPaths.getNodeFromPath(ours.get(i)))) {
        return false;
      }
    }
    return true;
  }

  /** One watcher object per epoch, so that ZooKeeper keeps one watch however often we read. */
  private Watcher watcherFor(int e) {
    OwnNodeWatcher current = ownNodeWatcher;
    if (current == null || current.epoch != e) {
      current = new OwnNodeWatcher(e);
      ownNodeWatcher = current;
    }
    return current;
  }

  private final class OwnNodeWatcher implements Watcher {
    final int epoch;

    OwnNodeWatcher(int epoch) {
      this.epoch = epoch;
    }

    @Override
    public void process(org.apache.zookeeper.WatchedEvent event) {
      if (event.getType() == EventType.None) {
        return; // connection events reach us through the client's events
      }
      events.accept(new StateEvent.OwnNodeChanged(epoch, event.getType() == EventType.NodeDeleted));
    }
  }
}

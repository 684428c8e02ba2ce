package io.lockstep.recipes.internal.engine;

import io.lockstep.recipes.internal.zk.Callbacks;
import io.lockstep.recipes.internal.zk.Retries;
import io.lockstep.recipes.internal.zk.Scheduler;
import io.lockstep.recipes.internal.zk.ZkRequests;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.Watcher.Event.KeeperState;

/**
 * A getData watch on the node we wait for, or a getChildren watch on the directory a lease waits
 * on: armed, counted in the {@link WatchRegistry} until it fires or is withdrawn, and removed from
 * the server on withdrawal when no other waiter of the session relies on it, even if the withdrawal
 * overtakes the answer that arms it. A child watch's answer (the children) is judged by the state
 * ({@link StateEvent.QueueWatched}); its firing, on any change of the children, comes back as a
 * {@link StateEvent.PredecessorChanged} like a data watch's.
 */
final class PredecessorWatch implements Watcher, Step.ArmedWatch {
  private static final boolean EVENT_ZXID = hasEventZxid();
  private static final int ANSWERED = 1;
  private static final int WITHDRAWN = 2;
  private static final long FIRST_REMOVAL_RETRY_MILLIS = 100;
  private static final long MAX_REMOVAL_RETRY_MILLIS = 2_000;

  private final ZkRequests zk;
  private final Scheduler scheduler;
  private final WatchRegistry registry;
  private final Consumer<StateEvent> events;
  private final int epoch;
  private final int generation;
  private final String path;
  private final boolean children; // a child watch on a directory, not a data watch on a node
  private final WatchRegistry.Key key;
  private final Acquisition ahead; // the acquisition of this process the node belongs to, if any
  private final AtomicBoolean ended = new AtomicBoolean();
  private final AtomicInteger progress = new AtomicInteger(); // ANSWERED | WITHDRAWN bits
  private volatile boolean removeWhenAnswered; // set before WITHDRAWN

  private PredecessorWatch(
      ZkRequests zk, LockEngine engine, Consumer<StateEvent> events, Step.Watch step) {
    this.zk = zk;
    this.scheduler = engine.scheduler();
    this.registry = engine.watches();
    this.events = events;
    this.epoch = step.epoch();
    this.generation = step.generation();
    this.path = step.path();
    this.children = step.children();
    this.key = new WatchRegistry.Key(zk.currentSessionId(), zk.toZk(path), children);
    this.ahead = children ? null : engine.localQueues().ownerOf(key.zkPath());
  }

  /** Arms the watch the step asks for, unless the attempt moved on meanwhile. */
  static void arm(
      ZkRequests zk,
      LockEngine engine,
      AcquisitionState state,
      Consumer<StateEvent> events,
      Step.Watch step) {
    PredecessorWatch watch = new PredecessorWatch(zk, engine, events, step);
    watch.registry.arm(watch.key);
    if (!state.watchArmed(step.epoch(), step.generation(), watch)) {
      watch.end();
      return;
    }
    watch.send();
  }

  private void send() {
    if (children) {
      sendChildren();
      return;
    }
    Callbacks.when(
        zk.getData(path, this),
        (data, failure) -> {
          if (failure == null) {
            if ((progress.getAndUpdate(p -> p | ANSWERED) & WITHDRAWN) != 0 && removeWhenAnswered) {
              removeFromServer(FIRST_REMOVAL_RETRY_MILLIS); // withdrawn before it was armed
            }
            return; // armed: the event brings us back
          }
          end();
          if (Retries.code(failure) == Code.NONODE) {
            gone(WatchedEvent.NO_ZXID); // already gone, and no watch was left
          } else {
            events.accept(new StateEvent.ReadFailed(epoch, failure));
          }
        });
  }

  /** getChildren with this watch; the answer goes to the state to be judged. */
  private void sendChildren() {
    Callbacks.when(
        zk.children(List.of(path), this),
        (read, failure) -> {
          if (failure == null) {
            if ((progress.getAndUpdate(p -> p | ANSWERED) & WITHDRAWN) != 0 && removeWhenAnswered) {
              removeFromServer(FIRST_REMOVAL_RETRY_MILLIS); // withdrawn before it was armed
              return;
            }
            events.accept(
                new StateEvent.QueueWatched(
                    epoch, generation, read.lists(), zk.isConnected(), read.decidedAtZxid()));
            return;
          }
          end();
          events.accept(new StateEvent.ReadFailed(epoch, failure));
        });
  }

  /**
   * The zxid of the change that fired {@code event}, or {@link WatchedEvent#NO_ZXID} when the
   * client cannot tell: {@code WatchedEvent.getZxid()} came with ZooKeeper 3.9, and a service may
   * run an older client beside Curator (then the waiter reads the queue instead of taking over).
   */
  private static long zxidOf(WatchedEvent event) {
    if (!EVENT_ZXID) {
      return WatchedEvent.NO_ZXID;
    }
    try {
      return event.getZxid();
    } catch (LinkageError olderClient) {
      return WatchedEvent.NO_ZXID;
    }
  }

  @Override
  public void process(WatchedEvent event) {
    if (event.getType() == EventType.None) {
      if (event.getState() == KeeperState.Expired || event.getState() == KeeperState.Closed) {
        end(); // the session's watches are gone; the client's events handle the rest
      }
      return;
    }
    end();
    if (event.getType() == EventType.NodeDeleted && !children) {
      gone(zxidOf(event));
    } else {
      events.accept(
          new StateEvent.PredecessorChanged(
              epoch, generation, false, false, zk.isConnected(), zxidOf(event)));
    }
  }

  /**
   * The node is gone, at {@code zxid} if known (else {@link WatchedEvent#NO_ZXID}). If it was a
   * hold of this process, it was at the head when granted, and nothing can sort between it and us:
   * the state may take over without reading the queue.
   */
  private void gone(long zxid) {
    boolean localHolderLeft = ahead != null && ahead.wasGrantedWith(path);
    events.accept(
        new StateEvent.PredecessorChanged(
            epoch, generation, true, localHolderLeft, zk.isConnected(), Math.max(0, zxid)));
  }

  @Override
  public void withdraw() {
    if (!end()) {
      return;
    }
    removeWhenAnswered = true;
    if ((progress.getAndUpdate(p -> p | WITHDRAWN) & ANSWERED) != 0) {
      removeFromServer(FIRST_REMOVAL_RETRY_MILLIS);
    }
  }

  /**
   * Removes the watch from the server, again after a delay while the connection fails: the client
   * keeps the watch and sets it again when it reconnects in the same session. Stops as soon as
   * another waiter of the session watches the path again (it then owns the watch), or the session
   * or client is gone (and the watch with it).
   */
  private void removeFromServer(long retryMillis) {
    if (registry.isArmed(key)) {
      return;
    }
    Callbacks.when(
        children
            ? zk.removeChildWatches(path, key.sessionId())
            : zk.removeDataWatches(path, key.sessionId()),
        (settled, failure) -> {
          if (failure == null && !settled) {
            long next = Math.min(retryMillis * 2, MAX_REMOVAL_RETRY_MILLIS);
            scheduler.schedule(retryMillis, () -> removeFromServer(next));
          }
        });
  }

  @Override
  public void forget() {
    end();
  }

  /** Marks the watch ended; true if it was the engine's last watch on this path and session. */
  private boolean end() {
    return ended.compareAndSet(false, true) && registry.disarm(key);
  }

  private static boolean hasEventZxid() {
    try {
      WatchedEvent.class.getMethod("getZxid");
      return true;
    } catch (NoSuchMethodException olderClient) {
      return false;
    }
  }
}
